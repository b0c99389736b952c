import Foundation
import Testing

extension SyncthingTests {
    @Test(
        "an edit on either machine reaches the other machine's store within seconds; the latency over 20 edits (median, maximum) is printed"
    )
    func propagationLatency() async throws {
        // SYNCTHING_LATENCY_EDITS=N changes the number of edits (20);
        // SYNCTHING_LATENCY_WATCHER=1 leaves the change to Syncthing's watcher instead of a scan;
        // SYNCTHING_LATENCY_POLL_MS=N waits N ms between two `syncctl get` runs (20).
        let environment = ProcessInfo.processInfo.environment
        let edits = environment["SYNCTHING_LATENCY_EDITS"].flatMap { Int($0) } ?? 20
        let pollGap = environment["SYNCTHING_LATENCY_POLL_MS"].flatMap { Double($0) }.map { $0 / 1000 } ?? 0.02
        let useScan = environment["SYNCTHING_LATENCY_WATCHER"] != "1"
        try await SyncthingPair.run { pair in
            // Given a record held by both machines
            let id = try await pair.a.put(["n": -1])
            try await pair.waitFor(id, on: pair.b)
            var fromPublication: [Double] = []
            var fromEdit: [Double] = []
            let clock = ContinuousClock()

            // When the machines edit it in turn, N times
            for n in 0..<edits {
                let (from, to) = n.isMultiple(of: 2) ? (pair.a, pair.b) : (pair.b, pair.a)
                try await Task.sleep(for: .milliseconds(300))
                let started = clock.now
                let run = try await from.syncctl(["put", "--type", "Note", "--id", id], stdin: #"{"n": \#(n)}"#)
                try #require(run.status == 0, "\(run)")
                let published = clock.now
                if useScan { try await from.syncthing.scan(from.ownFile) }
                // Polled with `syncctl get` (one run takes about 60 ms), with a short gap: every run
                // opens the store for writing, which delays the receiving syncd's merge pass.
                let arrived = try await eventually(within: 30, every: pollGap) {
                    (try await to.record(id)?.fields["n"] as? NSNumber)?.intValue == n
                }
                try #require(arrived, "edit \(n) did not reach \(to.syncthing.name)\n\(pair.diagnostics())")
                let done = clock.now
                fromPublication.append(Self.milliseconds(done - published))
                fromEdit.append(Self.milliseconds(done - started))
            }

            // Then every edit arrived; the numbers go to standard output for docs/syncthing-testing.md
            let method = useScan ? "REST scan of the published file" : "Syncthing's watcher (no scan)"
            print(
                """
                Syncthing propagation, \(edits) edits alternating a→b and b→a, \(method), polled every \(Int(pollGap * 1000)) ms + one syncctl get:
                  published file → other store: median \(Self.median(fromPublication)) ms, max \(Int(fromPublication.max() ?? 0)) ms
                  syncctl put started → other store: median \(Self.median(fromEdit)) ms, max \(Int(fromEdit.max() ?? 0)) ms
                  every run (published → store, ms): \(fromPublication.map { String(Int($0)) }.joined(separator: " "))
                """)
            #expect(
                (fromPublication.max() ?? 0) < (useScan ? 10_000 : 20_000),
                "a sanity bound only: the numbers above are the measurement")
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    static func median(_ values: [Double]) -> Int {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return Int(sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle])
    }
}
