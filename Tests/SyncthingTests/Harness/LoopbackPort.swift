import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// TCP ports on 127.0.0.1.
enum LoopbackPort {
    /// A port that is free now: bind port 0 on 127.0.0.1, read the port the kernel chose, close.
    ///
    /// Another program could take it before Syncthing binds it; the pair's start then fails
    /// with Syncthing's own message in its log, rather than silently using another port.
    static func free(avoiding taken: Set<Int> = []) throws -> Int {
        for _ in 0..<20 {
            let port = try bindAndRelease()
            if !taken.contains(port) { return port }
        }
        throw HarnessError("no free TCP port on 127.0.0.1 after 20 tries")
    }

    /// True when something accepts TCP connections on 127.0.0.1:`port`.
    static func isListening(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = loopback(port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }

    private static func bindAndRelease() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HarnessError("socket(): errno \(errno)") }
        defer { close(socket) }
        var address = loopback(0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw HarnessError("bind(127.0.0.1:0): errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard named == 0 else { throw HarnessError("getsockname(): errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func loopback(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
