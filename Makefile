# Thin wrapper around Meson.  The README's commands:
#   make chat [MODEL=FILE.gguf] [ARGS="..."]   set up, build and start a chat
#   make check                                  set up, build and run every test
#   make install [PREFIX=DIR]                   confab into DIR/bin (default ~/.local),
#                                               its man page and presets into DIR/share
#   make check-aarch64                          the aarch64 build's tests under qemu
#                                               (make check runs them too)
# Missing Debian packages are installed with apt-get when run as root;
# otherwise the exact apt-get line is printed and make stops.
BUILD ?= build
PREFIX ?= $(HOME)/.local
BUILD_PKGS = meson ninja-build pkg-config gcc libc6-dev libreadline-dev libncurses-dev \
             libcurl4-openssl-dev
# the aarch64 cross build and its emulator (tests/run-aarch64.sh)
CROSS_PKGS = gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
# the GPU backend (Vulkan headers, the shader compiler) and its tests' device
# (Mesa's lavapipe, a Vulkan device on the CPU)
GPU_PKGS = libvulkan-dev glslc mesa-vulkan-drivers
TEST_PKGS = tmux nodejs npm $(CROSS_PKGS) $(GPU_PKGS)

.PHONY: all build chat check check-aarch64 install deps deps-test clean

all: build

deps:
	@sh tests/need-packages.sh $(BUILD_PKGS)

deps-test:
	@sh tests/need-packages.sh $(BUILD_PKGS) $(TEST_PKGS)

$(BUILD)/build.ninja:
	meson setup $(BUILD)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

chat: build
	@$(BUILD)/confab chat $(if $(MODEL),-m "$(MODEL)") $(ARGS)

check: deps-test $(BUILD)/build.ninja
	@sh tests/run-all.sh $(BUILD)

install: build
	meson configure $(BUILD) -Dprefix=$(abspath $(PREFIX))
	meson install -C $(BUILD)
	@case ":$$PATH:" in *":$(abspath $(PREFIX))/bin:"*) ;; \
	  *) echo "note: $(abspath $(PREFIX))/bin is not on your PATH; add it (e.g. in ~/.profile)";; esac

check-aarch64:
	@sh tests/need-packages.sh $(BUILD_PKGS) $(CROSS_PKGS)
	@sh tests/run-aarch64.sh $(BUILD)-aarch64

clean:
	rm -rf $(BUILD) $(BUILD)-aarch64
