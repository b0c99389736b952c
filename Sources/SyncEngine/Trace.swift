import Foundation
let traceStart = Date()
func trace(_ what: String) {
    guard ProcessInfo.processInfo.environment["SS_TRACE"] != nil else { return }
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = Int(statm.split(separator: " ").dropFirst().first ?? "0") ?? 0
    FileHandle.standardError.write("\(Int(Date().timeIntervalSince(traceStart)*1000)) ms \(pages * 4 / 1024) MiB \(what)\n".data(using: .utf8)!)
}
