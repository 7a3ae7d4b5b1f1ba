# Sourced by the tools scripts: the toolchain paths a fresh shell may lack.
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
[ -d /usr/local/cuda/bin ] && PATH="$PATH:/usr/local/cuda/bin"
export PATH
