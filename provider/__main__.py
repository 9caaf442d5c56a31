"""The component provider that hosts gpt_oss_infra's public components (gpt_oss_infra.COMPONENTS) for
programs in any Pulumi language; Pulumi runs it (`python provider/`) after `pulumi package add`."""

from pulumi.provider.experimental import component_provider_host

import gpt_oss_infra

if __name__ == "__main__":
    component_provider_host(gpt_oss_infra.COMPONENTS, gpt_oss_infra.PACKAGE, version=gpt_oss_infra.__version__)
