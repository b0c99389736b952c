// The only C in SnapshotSync: libinotifytools (Debian's libinotifytools0-dev ships no pkg-config
// file, so the library is linked by name in module.modulemap), a few system calls, a cache hint,
// and Ed25519 through the system's OpenSSL (libcrypto).
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

// A hint to the CPU to load the two cache lines at `address` ahead of their use (Swift has no
// prefetch of its own): a pass parses the elements of several files in turn, each first touched
// again long after its file was split, and the first load of each was a cache miss.
static inline void snapshotsync_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
    __builtin_prefetch((const char *)address + 64, 0, 3);
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

// Ed25519 (RFC 8032) through the system's OpenSSL (libcrypto 3), for the signatures over whole
// files: swift-crypto's BoringSSL hashes with SHA-512 code that uses no AVX2, and Ed25519 hashes
// every signed byte twice; OpenSSL's signs a file in less than half the time on CPUs without
// SHA-512 instructions (docs/performance.md, sixth stop of 27 November). Keys are still made and
// kept by swift-crypto (SyncEngine's DeviceKey); the signatures are the same bytes (Ed25519 is
// deterministic), which DeviceKeyTests checks against swift-crypto's.
#include <openssl/evp.h>

// The 64-byte signature of `count` bytes at `message` by the private key whose 32-byte seed is
// `seed`: 1 when made, 0 when libcrypto failed.
static inline int snapshotsync_ed25519_sign(
    const unsigned char *seed, const unsigned char *message, size_t count, unsigned char *signature) {
    static const unsigned char nothing = 0;
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
    if (key == NULL) return 0;
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    size_t length = 64;
    int made = context != NULL && EVP_DigestSignInit(context, NULL, NULL, NULL, key) == 1
        && EVP_DigestSign(context, signature, &length, message != NULL ? message : &nothing, count) == 1
        && length == 64;
    EVP_MD_CTX_free(context);
    EVP_PKEY_free(key);
    return made;
}

// Whether `signature` (64 bytes) is the signature of `count` bytes at `message` by the 32-byte
// public key `public_key`: 1 when it is, 0 when not (or libcrypto failed), -1 when the key is not
// one libcrypto takes.
static inline int snapshotsync_ed25519_verify(
    const unsigned char *public_key, const unsigned char *signature, const unsigned char *message, size_t count) {
    static const unsigned char nothing = 0;
    EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, public_key, 32);
    if (key == NULL) return -1;
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    int valid = context != NULL && EVP_DigestVerifyInit(context, NULL, NULL, NULL, key) == 1
        && EVP_DigestVerify(context, signature, 64, message != NULL ? message : &nothing, count) == 1;
    EVP_MD_CTX_free(context);
    EVP_PKEY_free(key);
    return valid;
}
