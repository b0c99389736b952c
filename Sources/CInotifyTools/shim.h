// The only C in SnapshotSync: libinotifytools (Debian's libinotifytools0-dev ships no pkg-config
// file, so the library is linked by name in module.modulemap).
#include <sys/inotify.h>
#include <inotifytools/inotifytools.h>

// statfs(2), to tell whether inotify can see other machines' changes on a file system.
#include <sys/vfs.h>

// mallopt(3), to let malloc grow its per-thread heaps in large steps (SyncEngine's MemoryAllocator).
#include <malloc.h>

// sync_file_range(2), which glibc declares only under _GNU_SOURCE: starts writing a file's dirty
// pages back while more is still being written, so the fsync that ends the write has little
// left to wait for (SyncEngine's publication and the store's write-behind).
int sync_file_range(int fd, long offset, long count, unsigned int flags);
static inline int snapshotsync_start_writeback(int fd, long offset, long count) {
    return sync_file_range(fd, offset, count, 2 /* SYNC_FILE_RANGE_WRITE */);
}
