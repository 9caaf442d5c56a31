"""How a value that is not shown, or not known yet, reads in plans, checks and offline runs."""

SECRET = "[secret]"  # a secret's value: never shown, never checked
UNKNOWN = "[unknown]"  # known only once `pulumi up` has made what it comes from
