package dataplane

// pins.go: where an instance keeps its pinned maps and links. A new instance pins them in the
// host's bpffs (/sys/fs/bpf, which systemd mounts at boot; seg6x mounts it when absent), in
// /sys/fs/bpf/seg6x for the default instance /run/seg6x and /sys/fs/bpf/seg6x@<dir, '/' as '-'>
// for another, and <dir>/bpf is a symlink to that directory. The host's bpffs outlives any mount
// namespace, so a daemon given one of its own (systemd's ProtectSystem=, PrivateTmp=) can stop
// without taking the pins, and with them the XDP programs, along. An instance whose <dir>/bpf is a
// bpffs mount of its own (made by an earlier seg6x, or by a test rig) keeps using it.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/seg6x/seg6x/internal/state"
	"golang.org/x/sys/unix"
)

// HostBPFFS is the host's bpffs.
const HostBPFFS = "/sys/fs/bpf"

// HostPinDir is the directory in the host's bpffs that a new instance dir pins in.
func HostPinDir(dir string) string {
	dir = filepath.Clean(dir)
	if dir == state.DefaultDir {
		return filepath.Join(HostBPFFS, "seg6x")
	}
	return filepath.Join(HostBPFFS, "seg6x@"+strings.ReplaceAll(strings.Trim(dir, "/"), "/", "-"))
}

// onBPFFS says whether path (followed if a symlink) is a directory on a bpffs.
func onBPFFS(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.BPF_FS_MAGIC
}

// EnsurePins makes PinDir(dir) usable: kept as it is when it already is (or leads to) a bpffs;
// otherwise a symlink to HostPinDir(dir), made with the directory (and the host's bpffs mounted
// if it is not). A link whose target is gone (the host's bpffs was unmounted: its pins with it) is
// made again; an empty directory left where an earlier bpffs was mounted is replaced.
func EnsurePins(dir string) error {
	p := PinDir(dir)
	if onBPFFS(p) {
		return nil
	}
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	case err == nil && fi.IsDir():
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("%s is a directory but not a bpffs, and not empty: %w", p, err)
		}
	case err == nil:
		return fmt.Errorf("%s is neither a bpffs nor a link to one", p)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := EnsureBPFFS(HostBPFFS); err != nil {
		return err
	}
	host := HostPinDir(dir)
	if err := os.MkdirAll(host, 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Symlink(host, p); err != nil && !(errors.Is(err, fs.ErrExist) && onBPFFS(p)) {
		return err
	}
	return nil
}

// DropPins lets go of every pin of instance dir (tests' scratch instances, which a test removes
// whole): the directory in the host's bpffs with all it holds, and the link to it; or the bpffs
// mounted at PinDir(dir). Pinned links go with their pins: their programs detach.
func DropPins(dir string) {
	p := PinDir(dir)
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, HostBPFFS+"/") {
			_ = os.RemoveAll(target)
		}
		_ = os.Remove(p)
		return
	}
	_ = unix.Unmount(p, unix.MNT_DETACH)
}

// removePins removes the (emptied) pin directory of instance dir: the host's directory and the
// link to it, or the bpffs mounted for the instance.
func removePins(dir string) {
	p := PinDir(dir)
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := os.Readlink(p); err == nil {
			_ = os.Remove(target)
		}
		_ = os.Remove(p)
		return
	}
	_ = unix.Unmount(p, unix.MNT_DETACH)
}
