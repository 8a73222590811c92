# The sandbox image, built offline (debootstrap + docker import) and only when its recipe changed.
# Runs in provision so that CI's test run (which runs provision, not prestart) has it.
apt_install debootstrap
bash "$(dirname "${BASH_SOURCE[0]}")/../sandbox-image/build.sh"
