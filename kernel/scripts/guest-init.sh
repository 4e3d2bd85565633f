#!/bin/busybox sh
# PID 1 inside the lab VM: mount the basics, run /payload/run.sh, report its exit code on the
# console, and power off by itself (reboot -f; QEMU runs with -no-reboot and exits).
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mkdir -p /proc /sys /dev /tmp /mnt/blk
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
if [ -b /dev/vda ] && mount -t ext4 /dev/vda /mnt/blk; then
	export LAB_BLOCK_DIR=/mnt/blk
fi
echo "@@LAB-START $(uname -r)@@"
cd /payload && sh ./run.sh
rc=$?
echo "@@LAB-EXIT rc=$rc@@"
cd /
[ -n "$LAB_BLOCK_DIR" ] && umount /mnt/blk
sync
reboot -f
