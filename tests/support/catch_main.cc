// The one Catch2 main. It takes ~30 s to compile: never touch it.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
