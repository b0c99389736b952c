import RecordSchemas
import SnapshotFormat
import Testing

@Suite("RecordSchemas: checking versions against the schema version they carry")
struct ViolationTests {
    @Test("A version that fits its schema version passes, optional fields absent or null")
    func fittingVersionsPass() throws {
        let schemas = try Fixture.schemas()
        #expect(schemas.violation(of: Fixture.version(fields: #"{"name": "Bananas"}"#)) == nil)
        #expect(schemas.violation(of: Fixture.version(fields: #"{"name": "Bananas", "amount": "6"}"#)) == nil)
        #expect(schemas.violation(of: Fixture.version(fields: #"{"name": "Bananas", "amount": null}"#)) == nil)
        #expect(
            schemas.violation(of: Fixture.version(schemaVersion: 2, fields: #"{"name": "Pears", "aisle": 4}"#)) == nil)
        // Other fields are allowed unless the version says otherwise
        #expect(schemas.violation(of: Fixture.version(fields: #"{"name": "Bananas", "colour": "yellow"}"#)) == nil)
    }

    @Test("A required field that is missing is named")
    func missingRequiredField() throws {
        let problem = try Fixture.schemas().violation(of: Fixture.version(fields: #"{"amount": "6"}"#))
        #expect(problem == #"field "name" is required in schemaVersion 1 of ShoppingItem, and is missing"#)
    }

    @Test("A field of the wrong JSON type is named with the types it may have")
    func wrongType() throws {
        let schemas = try Fixture.schemas()
        #expect(
            schemas.violation(of: Fixture.version(schemaVersion: 2, fields: #"{"name": "Pears", "aisle": "4"}"#))
                == #"field "aisle" must be an integer, not a string ("4"), in schemaVersion 2 of ShoppingItem"#)
        #expect(
            schemas.violation(of: Fixture.version(fields: #"{"name": "Bananas", "amount": 6}"#))
                == #"field "amount" must be a string or null, not a number (6), in schemaVersion 1 of ShoppingItem"#)
        #expect(
            schemas.violation(of: Fixture.version(fields: #"{"name": null}"#))
                == #"field "name" must be a string, not null, in schemaVersion 1 of ShoppingItem"#)
    }

    @Test("An integer is an integral number within ±(2^53−1); every integer is a number")
    func integersAndNumbers() throws {
        let schemas = try Fixture.schemas()
        func aisle(_ text: String) -> String? {
            schemas.violation(of: Fixture.version(schemaVersion: 2, fields: #"{"name": "x", "aisle": \#(text)}"#))
        }
        #expect(aisle("4") == nil)
        #expect(aisle("4.0") == nil)
        #expect(aisle("-9007199254740991") == nil)
        #expect(aisle("4.5")?.contains("must be an integer, not a number (4.5)") == true)
        #expect(aisle("1e300")?.contains("must be an integer") == true)
        let reading = #"{"value": 3, "ok": true, "tags": [], "extra": {}, "gone": null}"#
        #expect(schemas.violation(of: Fixture.version("Reading", fields: reading)) == nil)
    }

    @Test("Each JSON type admits only its own values")
    func everyJSONType() throws {
        let schemas = try Fixture.schemas()
        let base = Fixture.fields(#"{"value": 3, "ok": true, "tags": [], "extra": {}, "gone": null}"#)
        let wrong: [(String, String, String)] = [
            ("value", #""3""#, "must be a number, not a string (\"3\")"),
            ("ok", "1", "must be a boolean, not a number (1)"),
            ("tags", "{}", "must be an array, not an object"),
            ("extra", "[]", "must be an object, not an array"),
            ("gone", "false", "must be null, not a boolean (false)"),
        ]
        for (field, value, rule) in wrong {
            var fields = base
            fields[field] = try StrictJSON.parse(value)
            let version = ReadOnly.Version(id: RecordID.random(), type: "Reading", fields: fields)
            #expect(schemas.violation(of: version) == "field \"\(field)\" \(rule), in schemaVersion 1 of Reading")
        }
    }

    @Test("A version that allows no other fields names the first undeclared one")
    func noOtherFields() throws {
        let fields = #"{"value": 3, "ok": true, "tags": [], "extra": {}, "gone": null, "colour": "red"}"#
        let problem = try Fixture.schemas().violation(of: Fixture.version("Reading", fields: fields))
        #expect(
            problem
                == #"field "colour" is not declared in schemaVersion 1 of Reading, which allows no other fields (declared: value, ok, tags, extra, gone)"#
        )
    }

    @Test("Undeclared types and tombstones pass untouched")
    func undeclaredTypesAndTombstones() throws {
        let schemas = try Fixture.schemas()
        #expect(schemas.violation(of: Fixture.version("Recipe", fields: #"{"anything": [1, 2]}"#)) == nil)
        #expect(schemas.violation(of: Fixture.version(deleted: true, fields: "{}")) == nil)
        #expect(schemas.violation(of: Fixture.version(schemaVersion: 7, deleted: true, fields: "{}")) == nil)
        #expect(SchemaSet().violation(of: Fixture.version(fields: "{}")) == nil)
    }

    @Test("A newer schemaVersion than declared passes with a note; an undeclared older one is a violation")
    func newerAndUndeclaredVersions() throws {
        let schemas = try Fixture.schemas()
        let newer = Fixture.version(schemaVersion: 3, fields: #"{"name": 42}"#)
        #expect(schemas.violation(of: newer) == nil)
        #expect(
            schemas.newerVersionNote(for: newer)
                == "schemaVersion 3 of ShoppingItem is newer than the schema files declare (known: 1, 2): merged unchecked and kept verbatim"
        )
        #expect(schemas.newerVersionNote(for: Fixture.version(fields: #"{"name": "x"}"#)) == nil)
        #expect(schemas.newerVersionNote(for: Fixture.version("Recipe", schemaVersion: 9, fields: "{}")) == nil)

        let onlyLater = try Fixture.schemas(
            #"{"format": 1, "types": [{"type": "ShoppingItem", "versions": [{"schemaVersion": 2}, {"schemaVersion": 3}]}]}"#
        )
        #expect(
            onlyLater.violation(of: Fixture.version(fields: "{}"))
                == "schemaVersion 1 of ShoppingItem is not declared (known: 2, 3)")
        let gap = try Fixture.schemas(
            #"{"format": 1, "types": [{"type": "ShoppingItem", "versions": [{"schemaVersion": 1}, {"schemaVersion": 3}]}]}"#
        )
        #expect(
            gap.violation(of: Fixture.version(schemaVersion: 2, fields: "{}"))
                == "schemaVersion 2 of ShoppingItem is not declared (known: 1, 3)")
    }

    @Test("Type names and field names compare by their bytes")
    func namesCompareByBytes() throws {
        // "é" written precomposed in the schema, decomposed in the record: a different type
        let schemas = try Fixture.schemas(
            "{\"format\": 1, \"types\": [{\"type\": \"Caf\u{E9}\", \"versions\": [{\"schemaVersion\": 1, \"fields\": {\"n\": \"string\"}}]}]}"
        )
        #expect(schemas.violation(of: Fixture.version("Caf\u{E9}", fields: "{}")) != nil)
        #expect(schemas.violation(of: Fixture.version("Cafe\u{301}", fields: "{}")) == nil)
    }
}
