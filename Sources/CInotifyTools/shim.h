// The only C in SnapshotSync: libinotifytools (Debian's libinotifytools0-dev ships no pkg-config
// file, so the library is linked by name in module.modulemap).
#include <sys/inotify.h>
#include <inotifytools/inotifytools.h>

// statfs(2), to tell whether inotify can see other machines' changes on a file system.
#include <sys/vfs.h>

// mallopt(3), to let malloc grow its per-thread heaps in large steps (SyncEngine's MemoryAllocator).
#include <malloc.h>
