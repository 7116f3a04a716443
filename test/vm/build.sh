#!/usr/bin/env bash
# test/vm/build.sh — prepare (once per machine) the kernel + base initramfs that test/vm/vm.ts
# boots under qemu to test kpc's IPVS-mode output against a real IPVS/ipset/netfilter kernel.
#
# Usage: test/vm/build.sh            build if needed, then print KPC_VM_IMAGE=<dir> (last line)
#        test/vm/build.sh --check    print the image dir if it is built, exit 1 if not (no build)
# Env:   KPC_VM_CACHE      cache directory (default /var/cache/kpc-vm)
#        KPC_VM_KERNEL_PKG kernel package to use instead of the one linux-image-cloud-amd64
#                          depends on (e.g. linux-image-6.1.0-57-cloud-amd64)
#        KPC_VM_REFRESH=1  ask apt for the current kernel even when one is cached
#
# What it makes, in $KPC_VM_CACHE/img-<key>/:
#   vmlinuz          the Debian cloud kernel (from `apt-get download`, unpacked with dpkg -x,
#                    never installed)
#   base.cpio.gz     initramfs: busybox-static, bash, ipvsadm(-save/-restore), ipset, iproute2's
#                    ip, iptables (nft and legacy), optional nft/nfacct/conntrack, their
#                    libraries, and every netfilter/IPVS/ipset module (+ veth, dummy) with a
#                    busybox-made modules.dep/alias. It has no /init: vm.ts appends one per run.
#   socat.cpio.gz    socat + libraries (only when socat is installed); vm.ts appends it only for
#                    runs with UDP servers or peer-reporting servers, so other boots stay small.
#   info.env         KVER=..., KPKG=..., DEB=..., sizes
# <key> hashes the kernel .deb name, the host tool versions and this script, so an upgrade of
# any of them builds a fresh image (older ones are removed). The kernel .deb is kept in
# $KPC_VM_CACHE/debs/ so a rebuild does not download it again.
#
# Host needs (Debian packages): busybox-static ipvsadm ipset iproute2 iptables (socat for UDP
# tests) and apt/dpkg; qemu-system-x86 is needed to boot, not to build. Root is only needed for
# `apt-get update` when the package lists are missing or stale.
set -euo pipefail
export LC_ALL=C
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KPC_VM_CACHE:-/var/cache/kpc-vm}
MODE=${1:-build}
META=linux-image-cloud-amd64

log() { echo "build.sh: $*" >&2; }
die() { echo "build.sh: error: $*" >&2; exit 3; }

need() { # need <command> <debian package>
  command -v "$1" >/dev/null 2>&1 || die "missing command '$1' (Debian package $2)"
}
need busybox busybox-static
need ipvsadm ipvsadm
need ipvsadm-save ipvsadm
need ipset ipset
need ip iproute2
need xtables-nft-multi iptables
need xtables-legacy-multi iptables
need bash bash
need dash dash
need nsenter util-linux
need timeout coreutils
need xargs findutils
need dpkg dpkg
need apt-get apt
need ldd libc-bin
need gzip gzip
need flock util-linux
need sha256sum coreutils

mkdir -p "$CACHE/debs"
exec 9>"$CACHE/.lock"
flock -w 900 9 || die "could not lock $CACHE/.lock"

# ---------------------------------------------------------------------------------------------
# Which kernel package? The ABI name (6.1.0-NN) changes with Debian point releases, so ask the
# meta-package; fall back to a cached .deb when apt knows nothing (no package lists).
resolve_kpkg() {
  apt-cache depends "$META" 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}'
}
# A kernel .deb already in the cache is reused without asking apt (apt-cache costs 1-2 s and
# would switch kernels at each Debian point release); KPC_VM_REFRESH=1 asks apt again.
KPKG=${KPC_VM_KERNEL_PKG:-}
if [[ -z $KPKG && -z ${KPC_VM_REFRESH:-} ]]; then
  cached=$(ls -1 "$CACHE"/debs/linux-image-*.deb 2>/dev/null | sort -V | tail -n1 || true)
  [[ -n $cached ]] && KPKG=$(basename "$cached" | cut -d_ -f1)
fi
[[ -n $KPKG ]] || KPKG=$(resolve_kpkg || true)
if [[ -z $KPKG && $MODE != --check && $(id -u) == 0 ]]; then
  log "apt-cache does not know $META; running apt-get update"
  apt-get update -qq </dev/null >&2 || true
  KPKG=$(resolve_kpkg || true)
fi
DEB=""
if [[ -n $KPKG ]]; then
  DEB=$(ls -1 "$CACHE/debs/${KPKG}"_*.deb 2>/dev/null | sort -V | tail -n1 || true)
fi
if [[ -z $KPKG ]]; then
  DEB=$(ls -1 "$CACHE"/debs/linux-image-*.deb 2>/dev/null | sort -V | tail -n1 || true)
  [[ -n $DEB ]] || die "cannot resolve the kernel package ($META unknown to apt-cache; run apt-get update)"
  KPKG=$(basename "$DEB" | cut -d_ -f1)
  log "apt-cache cannot resolve $META; using cached $(basename "$DEB")"
fi

download_kernel() {
  local tmp; tmp=$(mktemp -d "$CACHE/debs/.dl.XXXXXX")
  chmod 777 "$tmp" # lets apt's _apt sandbox user write there (else a harmless warning)
  if ! (cd "$tmp" && apt-get download -qq "$KPKG" </dev/null >&2); then
    if [[ $(id -u) == 0 ]]; then
      log "apt-get download $KPKG failed; apt-get update and retry"
      apt-get update -qq </dev/null >&2 || true
      KPKG=${KPC_VM_KERNEL_PKG:-$(resolve_kpkg)}
      (cd "$tmp" && apt-get download -qq "$KPKG" </dev/null >&2) || { rm -rf "$tmp"; die "apt-get download $KPKG failed"; }
    else
      rm -rf "$tmp"; die "apt-get download $KPKG failed (not root, cannot apt-get update)"
    fi
  fi
  local f; f=$(ls -1 "$tmp"/*.deb | head -n1)
  mv "$f" "$CACHE/debs/"
  rm -rf "$tmp"
  DEB="$CACHE/debs/$(basename "$f")"
}

# ---------------------------------------------------------------------------------------------
# Cache key: kernel .deb name + host tool versions + this script.
OPTIONAL_PKGS=(socat nftables nfacct conntrack)
host_versions() {
  dpkg-query -W -f='${Package}=${Version}\n' busybox-static busybox ipvsadm ipset libipset13 \
    iproute2 iptables libxtables12 libnftnl11 libc6 bash dash coreutils util-linux findutils netbase "${OPTIONAL_PKGS[@]}" 2>/dev/null \
    | sort || true
}
deb_id=${DEB:+$(basename "$DEB")}
deb_id=${deb_id:-$KPKG}
KEY=$( { echo "$deb_id"; host_versions; sha256sum "$HERE/build.sh" | cut -d' ' -f1; } | sha256sum | cut -c1-16)
IMG="$CACHE/img-$KEY"

if [[ -f $IMG/ready ]]; then
  echo "KPC_VM_IMAGE=$IMG"
  exit 0
fi
if [[ $MODE == --check ]]; then
  echo "not built: $IMG" >&2
  exit 1
fi

t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
if [[ -z $DEB ]]; then
  log "downloading $KPKG"
  download_kernel
  # the key was computed from the package name only; recompute with the .deb name
  KEY=$( { basename "$DEB"; host_versions; sha256sum "$HERE/build.sh" | cut -d' ' -f1; } | sha256sum | cut -c1-16)
  IMG="$CACHE/img-$KEY"
  if [[ -f $IMG/ready ]]; then echo "KPC_VM_IMAGE=$IMG"; exit 0; fi
fi

WORK=$(mktemp -d "$CACHE/.build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
log "unpacking $(basename "$DEB")"
dpkg -x "$DEB" "$WORK/kroot"
KVER=$(ls "$WORK/kroot/lib/modules" | head -n1)
MSRC="$WORK/kroot/lib/modules/$KVER"
[[ -f $MSRC/modules.dep ]] || busybox depmod -b "$WORK/kroot" "$KVER"

# ---------------------------------------------------------------------------------------------
# Base root file system.
ST="$WORK/root"
LIBDIR=/lib/x86_64-linux-gnu
mkdir -p "$ST"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run/netns,var/run,lib64,etc,root} \
         "$ST$LIBDIR" "$ST/usr/lib/x86_64-linux-gnu"

copy_libs() { # copy_libs <root> <elf>...: the ELF files' shared libraries (ldd closure)
  local root=$1; shift
  local f l
  for f in "$@"; do
    { ldd "$f" 2>/dev/null || true; } | awk '/=> \//{print $3}' | while read -r l; do
      [[ -e $root$LIBDIR/$(basename "$l") ]] || cp -L "$l" "$root$LIBDIR/"
    done
  done
}
copy_bin() { # copy_bin <root> <command> <dest dir in root>
  local root=$1 src; src=$(command -v "$2"); src=$(readlink -f "$src")
  cp -L "$src" "$root$3/$2"
  copy_libs "$root" "$src"
}

# busybox applets in /bin; real tools in /usr/sbin and /usr/bin win because PATH lists them first.
cp -L "$(command -v busybox)" "$ST/bin/busybox"
copy_libs "$ST" "$ST/bin/busybox" # no-op for busybox-static
for a in $(busybox --list); do
  [[ -e $ST/bin/$a ]] || ln -s busybox "$ST/bin/$a"
done
for a in modprobe insmod rmmod lsmod depmod poweroff reboot halt; do ln -sf ../bin/busybox "$ST/sbin/$a"; done

# /bin/sh is dash, as on Debian. NOT busybox ash: Debian's busybox is built with
# FEATURE_SH_STANDALONE, so its ash runs its own applets (busybox ip, which knows no -batch,
# `type dummy`, ...) before anything on PATH; kpc's `#!/bin/sh` apply.sh would get them.
copy_bin "$ST" dash /usr/bin
ln -sf ../usr/bin/dash "$ST/bin/sh"
copy_bin "$ST" bash /usr/bin
# Likewise busybox's timeout/nsenter/env/xargs exec their own applets first (`timeout 5 ip ...`
# would run busybox ip): ship the coreutils/util-linux/findutils ones in /usr/bin, ahead of /bin.
for b in timeout env nsenter unshare setsid xargs; do copy_bin "$ST" "$b" /usr/bin; done
ln -sf ../usr/bin/bash "$ST/bin/bash"
ln -sf ../usr/bin/bash "$ST/bin/sh.bash"
copy_bin "$ST" ipvsadm /usr/sbin
cp "$(command -v ipvsadm-save)" "$(command -v ipvsadm-restore)" "$ST/usr/sbin/"
copy_bin "$ST" ipset /usr/sbin
copy_bin "$ST" ip /usr/sbin
ln -sf ../usr/sbin/ip "$ST/bin/ip"; ln -sf ../usr/sbin/ip "$ST/sbin/ip"
# optional inspection tools
command -v nft >/dev/null 2>&1 && copy_bin "$ST" nft /usr/sbin
command -v nfacct >/dev/null 2>&1 && copy_bin "$ST" nfacct /usr/sbin
command -v conntrack >/dev/null 2>&1 && copy_bin "$ST" conntrack /usr/sbin

# iptables: both backends. iptables/ip6tables(-save/-restore) default to nft, as on the host;
# the guest can switch them to legacy (vm.ts case option iptables: 'legacy').
copy_bin "$ST" xtables-nft-multi /usr/sbin
copy_bin "$ST" xtables-legacy-multi /usr/sbin
for fam in iptables ip6tables; do
  for suf in "" -save -restore; do
    ln -sf xtables-nft-multi "$ST/usr/sbin/$fam-nft$suf"
    ln -sf xtables-legacy-multi "$ST/usr/sbin/$fam-legacy$suf"
    ln -sf "$fam-nft$suf" "$ST/usr/sbin/$fam$suf"
  done
done
for t in iptables-translate ip6tables-translate iptables-restore-translate ip6tables-restore-translate xtables-monitor; do
  ln -sf xtables-nft-multi "$ST/usr/sbin/$t"
done
XTDIR=/usr/lib/x86_64-linux-gnu/xtables
mkdir -p "$ST$XTDIR"
cp -a "$XTDIR"/. "$ST$XTDIR/"
copy_libs "$ST" "$XTDIR"/*.so

cp -L /lib64/ld-linux-x86-64.so.2 "$ST/lib64/"
ln -sf ../lib64/ld-linux-x86-64.so.2 "$ST$LIBDIR/ld-linux-x86-64.so.2"

# /etc: protocols/services (ipset and iptables resolve tcp/udp and port names), iproute2 tables.
cp /etc/protocols /etc/services "$ST/etc/"
[[ -d /etc/iproute2 ]] && cp -a /etc/iproute2 "$ST/etc/"
[[ -f /etc/ethertypes ]] && cp /etc/ethertypes "$ST/etc/"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$ST/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$ST/etc/group"
printf 'hosts: files\nprotocols: files\nservices: files\n' > "$ST/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$ST/etc/hosts"
echo kpc-vm > "$ST/etc/hostname"

# ---------------------------------------------------------------------------------------------
# Kernel modules: all of netfilter (IPVS, ipset, nf_tables, x_tables, conntrack, NAT), the IPv4/6
# netfilter dirs, veth, dummy, crc32c + the modules.dep closure. busybox modprobe in the guest
# serves the kernel's request_module() (set types, schedulers, nft expressions, xt matches).
want=$(cd "$MSRC" && {
  find kernel/net/netfilter kernel/net/ipv4/netfilter kernel/net/ipv6/netfilter -name '*.ko*'
  find kernel \( -name 'dummy.ko*' -o -name 'veth.ko*' -o -name 'crc32c_generic.ko*' \
                 -o -name 'crc32c-intel.ko*' \) -print
})
all=$(for m in $want; do
  echo "$m"
  grep "^$m:" "$MSRC/modules.dep" | cut -d: -f2 | tr ' ' '\n'
done | grep . | sort -u)
nmods=0
for m in $all; do
  mkdir -p "$ST/lib/modules/$KVER/$(dirname "$m")"
  cp "$MSRC/$m" "$ST/lib/modules/$KVER/$m"
  nmods=$((nmods + 1))
done
cp "$MSRC/modules.builtin" "$MSRC/modules.order" "$ST/lib/modules/$KVER/" 2>/dev/null || true
[[ -f $MSRC/modules.builtin.modinfo ]] && cp "$MSRC/modules.builtin.modinfo" "$ST/lib/modules/$KVER/"
busybox depmod -b "$ST" "$KVER"

# Versions of what is inside, for the test report.
{
  echo "KVER=$KVER"
  echo "KPKG=$KPKG"
  echo "DEB=$(basename "$DEB")"
  echo "MODULES=$nmods"
  echo "BUSYBOX=\"$(busybox 2>&1 | head -n1 | cut -d' ' -f2)\""
  echo "IPVSADM=\"$(dpkg-query -W -f='${Version}' ipvsadm 2>/dev/null)\""
  echo "IPSET=\"$(ipset --version 2>&1 | head -n1)\""
  echo "IPTABLES=\"$(xtables-nft-multi iptables --version 2>&1 | head -n1)\""
  echo "IPROUTE2=\"$(ip -V 2>&1 | head -n1)\""
} > "$WORK/info.env"
cp "$WORK/info.env" "$ST/etc/kpc-vm.env"

OUT="$WORK/img"
mkdir -p "$OUT"
cp "$WORK/kroot/boot/vmlinuz-$KVER" "$OUT/vmlinuz"
(cd "$ST" && find . | LC_ALL=C sort | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$OUT/base.cpio.gz"

# socat segment: UDP servers and servers that report the client address (busybox nc can't).
if command -v socat >/dev/null 2>&1; then
  U="$WORK/socat"
  mkdir -p "$U/usr/bin" "$U$LIBDIR"
  copy_bin "$U" socat /usr/bin
  # drop libraries the base already has
  for l in "$U$LIBDIR"/*; do [[ -e $ST$LIBDIR/$(basename "$l") ]] && rm -f "$l"; done
  (cd "$U" && find . | LC_ALL=C sort | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$OUT/socat.cpio.gz"
fi
{
  cat "$WORK/info.env"
  echo "BASE_BYTES=$(stat -c %s "$OUT/base.cpio.gz")"
  [[ -f $OUT/socat.cpio.gz ]] && echo "SOCAT_BYTES=$(stat -c %s "$OUT/socat.cpio.gz")"
  echo "BUILD_SECONDS=$(elapsed)"
} > "$OUT/info.env"
touch "$OUT/ready"

rm -rf "$IMG"
mv "$OUT" "$IMG"
# Remove older images and kernel .debs (this key's .deb stays).
for d in "$CACHE"/img-*; do [[ $d == "$IMG" ]] || rm -rf "$d"; done
for f in "$CACHE"/debs/*.deb; do [[ $f == "$DEB" ]] || rm -f "$f"; done
log "built $IMG (kernel $KVER, $nmods modules, base $(du -h "$IMG/base.cpio.gz" | cut -f1)) in $(elapsed) s"
echo "KPC_VM_IMAGE=$IMG"
