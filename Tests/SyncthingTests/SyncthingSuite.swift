import Testing

/// Every test here runs two real Syncthing instances on 127.0.0.1 and one real `syncd` per
/// machine: one test at a time (one serialized suite), each with its own instances, ports and
/// folders, all stopped by PID and removed at the end.
///
/// The harness is in `Harness/`; docs/syncthing-testing.md says how it works and how to run it by hand.
@Suite("Syncthing: two real instances on loopback, one syncd per machine", .serialized)
struct SyncthingTests {}
