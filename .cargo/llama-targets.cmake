# Included by CMake after each project() of llama.cpp's build (CMAKE_PROJECT_INCLUDE, set in
# config.toml; llama-cpp-sys-2's build script passes every CMAKE_* variable to CMake).
#
# llama-cpp-sys-2 turns on llama.cpp's `common` library whenever its `common` feature is on, and
# llama-cpp-2 depends on it with its default features, so the feature cannot be turned off from
# here. crossfile calls nothing of `common` (chat templates, argument parsing, JSON schemas,
# downloads: a third of llama.cpp's build, with cpp-httplib); llama-cpp-2 is built without its own
# `common` feature, so no Rust code refers to the wrapper's `llama_rs_*` functions and the linker
# leaves them out. This keeps llama.cpp's build to the `llama` and `ggml` libraries.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama: build common utils library" FORCE)
