import ArgumentParser
import Foundation
import SnapshotFormat
import SyncCommandLine
import SyncEngine

/// Prints one line of text for people, its control characters shown escaped (`\u{1B}`).
///
/// Every text `print` of syncctl comes here (a String argument prefers this one to the
/// standard library's): file names and the reasons that quote them are chosen by anyone who can
/// write the shared folder, and a raw newline, carriage return or escape sequence in one could
/// forge a line of the report or rewrite the terminal. JSON output goes out through
/// `Swift.print`: JSON escapes them itself.
func print(_ line: String) {
    Swift.print(TextLine.escapingControls(line))
}

/// Prints a Codable value as pretty JSON with sorted keys, empty lists as `[]`.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    Swift.print(String(decoding: PrettyJSON.compactingEmptyContainers(Array(try encoder.encode(value))), as: UTF8.self))
}

/// Prints a JSON value (verbatim records) as RFC 8785 text that any I-JSON reader accepts.
func printCanonical(_ value: JSONValue) {
    Swift.print(value.interchangeString)
}

/// Bytes for standard output, written out a megabyte at a time: a command that prints every
/// record (a million of them) holds its output one piece at a time, not whole.
struct StandardOutput {
    private var bytes: [UInt8] = []
    private static let pieceSize = 1 << 20

    init() { bytes.reserveCapacity(Self.pieceSize + 64 << 10) }

    /// Gives `body` the bytes to append to, then writes out what is held once it reaches a megabyte.
    mutating func write(_ body: (inout [UInt8]) -> Void) throws {
        body(&bytes)
        if bytes.count >= Self.pieceSize { try flush() }
    }

    /// Writes out what is held (`write(2)` on descriptor 1, nothing buffered in between: call it
    /// before anything else prints). A reader gone away (`syncctl export | head`) ends the
    /// command with that error instead of reading the rest of the store for nothing.
    mutating func flush() throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(STDOUT_FILENO, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw OutputError(reason: String(cString: strerror(errno)))
                }
                offset += written
            }
        }
        bytes.removeAll(keepingCapacity: true)
    }
}

/// Prints records as one JSON array of their lines (each its normal form in RFC 8785, as this
/// device publishes it), each as `forEach` reads it, the way `printCanonical` would print the
/// array built whole.
func printRecordArray(_ forEach: ((ReadOnly.Record) throws -> Void) throws -> Void) throws {
    var out = StandardOutput()
    var count = 0
    try forEach { record in
        try out.write { bytes in
            bytes.append(count == 0 ? UInt8(ascii: "[") : UInt8(ascii: ","))
            bytes += record.interchangeLine
        }
        count += 1
    }
    try out.write { $0 += (count == 0 ? "[]\n" : "]\n").utf8 }
    try out.flush()
}

/// Reads a JSON object from a file path, or standard input for "-" or nil.
func readJSONObject(from path: String?, what: String) throws -> JSONObject {
    let data: Data
    if let path, path != "-" {
        guard let contents = FileManager.default.contents(atPath: path) else {
            // Input that is not there (66), not input that is unusable (65).
            printError("cannot read \(what) from \(path): no such readable file")
            throw SyncctlExit.noInput
        }
        data = contents
    } else {
        // A person at a terminal would otherwise wait on a silent command.
        if isatty(STDIN_FILENO) == 1 {
            printError("reading \(what) as a JSON object from standard input; end with Ctrl-D")
        }
        data = FileHandle.standardInput.readDataToEndOfFile()
    }
    let value: JSONValue
    do {
        value = try StrictJSON.parse([UInt8](data))
    } catch {
        let source = path.map { $0 == "-" ? "standard input" : $0 } ?? "standard input"
        throw UsageProblem(message: "\(what) from \(source): not valid JSON (\(error))")
    }
    guard case .object(let object) = value else {
        throw UsageProblem(
            message: "\(what) must be a JSON object like {\"name\": \"Bananas\"}, not \(value.briefDescription)")
    }
    return object
}

/// Pads text to a width for tables.
func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

// Record and device IDs on the command line are checked as it is parsed: a wrong one is a usage
// error (exit 64), shown with the argument's help and the usage line, before anything is opened.
extension RecordID: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

extension DeviceID: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}
