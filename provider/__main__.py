"""The component provider that hosts gpt_oss_infra's public components (gpt_oss_infra.COMPONENTS) for
programs in any Pulumi language; Pulumi runs it (`python provider/`) after `pulumi package add`."""

import gpt_oss_infra
from gpt_oss_infra.components.provider_host import host

if __name__ == "__main__":
    host(gpt_oss_infra.COMPONENTS, gpt_oss_infra.PACKAGE, version=gpt_oss_infra.__version__)
