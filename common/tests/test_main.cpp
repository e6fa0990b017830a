// SPDX-License-Identifier: MIT
// Host-only unit tests of common/: doctest's own main, no GPU needed.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
