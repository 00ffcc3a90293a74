# The guest root's recipe, shared by scripts/test.sh (the test image, the microVM guest) and ./sandbox4j
# (the microVM guest on first use): Debian minbase with sh, coreutils, python3 (the kinds' interpreter and an
# egress bridge), socat (the preferred bridge) and curl (the egress suites' client). The test image's tag is
# a digest of these three values.
image_suite=bookworm
image_packages=python3,socat,curl
image_recipe_version=1
