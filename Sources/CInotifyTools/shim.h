// The only C in SnapshotSync: libinotifytools (Debian's libinotifytools0-dev ships no pkg-config
// file, so the library is linked by name in module.modulemap).
#include <sys/inotify.h>
#include <inotifytools/inotifytools.h>

// statfs(2), to tell whether inotify can see other machines' changes on a file system.
#include <sys/vfs.h>

// mallopt(3), to let malloc grow its per-thread heaps in large steps (SyncEngine's MemoryAllocator).
#include <malloc.h>

// sync_file_range(2), which glibc declares only under _GNU_SOURCE: starts writing a file's dirty
// pages back while more is still being written, so that the fsync ending a long write has little
// left to wait for (a first merge's store: SyncEngine's SystemCalls.startWriteback).
int sync_file_range(int fd, long offset, long count, unsigned int flags);
static inline int snapshotsync_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, 2 /* SYNC_FILE_RANGE_WRITE */);
}

// open(2) with O_TMPFILE, which glibc defines only under _GNU_SOURCE (and Swift cannot import
// as a macro of two flags): an unnamed file in a directory, gone when closed (a pass's spill file).
#include <fcntl.h>
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif
static inline int snapshotsync_open_unnamed(const char *directory) {
    return open(directory, __O_TMPFILE | O_DIRECTORY | O_RDWR | O_CLOEXEC, 0600);
}
