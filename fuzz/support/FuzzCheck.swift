// Shared by every fuzz target (docs/fuzzing.md). Compiled into the SnapshotFormat module with the
// targets, so the targets reach internal symbols (the reader's fast and plain paths) without
// @testable.

/// Stops the target with `message` when `condition` does not hold: libFuzzer keeps the input as
/// a crash. (`precondition` drops its message in optimized builds; a finding needs the message.)
func fuzzCheck(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() { fatalError(message(), file: file, line: line) }
}

/// The bytes libFuzzer hands a target, as an array.
func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// Bytes shown in a message: as text when they are printable ASCII, escaped otherwise, cut at 300.
func fuzzShown(_ bytes: some Collection<UInt8>) -> String {
    var shown = ""
    for byte in bytes.prefix(300) {
        if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") {
            shown.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            shown += "\\x" + String(byte, radix: 16).leftPadded(to: 2)
        }
    }
    return bytes.count > 300 ? shown + "… (\(bytes.count) bytes)" : shown
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
