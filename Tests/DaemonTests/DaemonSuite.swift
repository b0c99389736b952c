import Testing

/// Every daemon test runs real `syncd` processes: one at a time (one suite, serialized).
@Suite("syncd: real processes, folders, inotify and notify sockets", .serialized)
struct DaemonTests {}
