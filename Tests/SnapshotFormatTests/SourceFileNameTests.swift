import SnapshotFormat
import Testing

/// One case of `filenames.json`.
struct FileNameVector: Sendable, CustomTestStringConvertible {
    let name: String
    let deviceInside: String
    let expected: String
    let note: String

    var testDescription: String {
        "\"\(name)\" holding '\(deviceInside)' is \(expected)" + (note.isEmpty ? "" : " (\(note))")
    }

    static func all() throws -> [FileNameVector] {
        try Fixtures.jsonObjects("filenames.json").map { object in
            guard let name = object["name"] as? String, let device = object["deviceInside"] as? String,
                let expected = object["expected"] as? String
            else { throw FixtureError.malformed("filenames.json", "an incomplete case: \(object)") }
            return FileNameVector(name: name, deviceInside: device, expected: expected, note: object["note"] as? String ?? "")
        }
    }
}

@Suite("Source file names")
struct SourceFileNameTests {
    @Test("Every case of filenames.json is classified as the vectors say", arguments: try FileNameVector.all())
    func vector(_ vector: FileNameVector) {
        let role = SourceFileName.classify(name: vector.name, deviceInside: vector.deviceInside)
        #expect(SourceFileName.isConsidered(vector.name) == (vector.expected != "skipped"))
        switch (vector.expected, role) {
        case ("own", .own), ("copy", .copy), ("skipped", .skipped):
            break
        case ("rejected", .rejected(let reason)):
            #expect(!reason.isEmpty)
        default:
            Issue.record("expected \(vector.expected), got \(role)")
        }
    }

    @Test("The vectors hold 66 cases")
    func vectorCount() throws {
        #expect(try FileNameVector.all().count == 66)
    }

    @Test("A device's own file is <device>.json")
    func ownFileName() throws {
        let id = try #require(DeviceID("pi.kitchen"))
        #expect(SourceFileName.ownFileName(for: id) == "pi.kitchen.json")
        #expect(SourceFileName.classify(name: "pi.kitchen.json", deviceInside: "pi.kitchen") == .own)
        #expect(SourceFileName.isSource(name: "pi.kitchen (1).json", of: id))
        #expect(!SourceFileName.isSource(name: "pi.json", of: id))
    }

    @Test("Only names ending in exactly .json and not starting with a dot are considered", arguments: [
        ("laptop.json", true), ("a b (c).json", true), ("-.json", true), ("x.json", true),
        (".json", false), (".laptop.json", false), ("json", false), ("", false), ("laptop.jsonx", false),
        ("laptop.JSON", false), ("laptop.json\u{301}", false), ("laptop.jso\u{FF4E}", false), ("laptop.json/", false),
    ])
    func considered(name: String, considered: Bool) {
        #expect(SourceFileName.isConsidered(name) == considered)
        if !considered {
            #expect(SourceFileName.classify(name: name, deviceInside: "laptop") == .skipped)
        }
    }

    @Test("Each copy separator makes a copy, with anything or nothing after it", arguments: SourceFileName.copySeparators)
    func separators(separator: String) {
        #expect(SourceFileName.classify(name: "laptop\(separator).json", deviceInside: "laptop") == .copy)
        #expect(SourceFileName.classify(name: "laptop\(separator)x y (z) ’.json", deviceInside: "laptop") == .copy)
        #expect(SourceFileName.classify(name: "laptop\(separator).json", deviceInside: "phone") != .copy)
    }

    @Test("Names compare byte by byte, not by Unicode equivalence")
    func byteWise() {
        // " " followed by a combining mark is one Character but still a space byte: a copy.
        #expect(SourceFileName.classify(name: "laptop \u{301}.json", deviceInside: "laptop") == .copy)
        #expect(SourceFileName.classify(name: "laptop\u{301}.json", deviceInside: "laptop") != .own)
        #expect(SourceFileName.classify(name: "laptop (caf\u{E9}).json", deviceInside: "laptop") == .copy)
        #expect(SourceFileName.classify(name: "laptop (cafe\u{301}).json", deviceInside: "laptop") == .copy)
    }

    @Test("A rejection says why, for a person")
    func reasons() {
        #expect(
            SourceFileName.classify(name: "phone.json", deviceInside: "laptop")
                == .rejected(reason: "the file is named for device 'phone' but says it is from 'laptop'"))
        #expect(
            SourceFileName.classify(name: "laptop.json", deviceInside: "Laptop")
                == .rejected(reason: "'Laptop' is not a valid device ID: has 'L': device IDs use only a-z 0-9 . _ - (lower case)"))
        #expect(
            SourceFileName.classify(name: "x.json", deviceInside: "")
                == .rejected(reason: "'' is not a valid device ID: is empty"))
        guard case .rejected(let reason) = SourceFileName.classify(name: "phone (1).json", deviceInside: "laptop") else {
            Issue.record("should be rejected")
            return
        }
        #expect(reason.contains("'phone (1).json'") && reason.contains("'laptop.json'") && reason.contains("'laptop'"))
    }
}
