import RecordSchemas
import SnapshotFormat
import Testing

@Suite("RecordSchemas: reading schema files")
struct LoadingTests {
    @Test("A schema file declares types and their versions")
    func declaresTypesAndVersions() throws {
        let schemas = try Fixture.schemas()
        #expect(schemas.typeNames == ["Reading", "ShoppingItem"])
        #expect(schemas.declaredVersions(of: "ShoppingItem") == [1, 2])
        #expect(schemas.declaredVersions(of: "Recipe").isEmpty)
    }

    @Test(
        "Files that break the format are refused with the file, the place and what to change",
        arguments: [
            ("{", "is not valid JSON"),
            (#"{"format": 1, "format": 1, "types": []}"#, "duplicate"),
            (#"{"types": []}"#, #"the file has no "format""#),
            (#"{"format": 0, "types": []}"#, #""format" must be 1, not 0"#),
            (#"{"format": 1}"#, #""types" must be an array"#),
            (#"{"format": 1, "types": [], "typos": 1}"#, #"unknown key "typos""#),
            (#"{"format": 1, "types": [{"versions": [{"schemaVersion": 1}]}]}"#, #"types[0] needs "type""#),
            (
                #"{"format": 1, "types": [{"type": "", "versions": [{"schemaVersion": 1}]}]}"#,
                "must be 1 to 128 characters"
            ),
            (#"{"format": 1, "types": [{"type": "T", "versions": []}]}"#, "a non-empty array of schema versions"),
            (#"{"format": 1, "types": [{"type": "T", "versions": [{"fields": {}}]}]}"#, #"needs "schemaVersion""#),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 0}]}]}"#,
                "must be an integer >= 1, not 0"
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1.5}]}]}"#,
                "must be an integer >= 1"
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1}, {"schemaVersion": 1}]}]}"#,
                #"declares schemaVersion 1 of "T" again"#
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1}]}, {"type": "T", "versions": [{"schemaVersion": 2}]}]}"#,
                #"types[1] declares "T" again"#
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1, "fields": {"a": "text"}}]}]}"#,
                #"types[0].versions[0].fields.a names "text", which is not a JSON type (use one of: string, number, integer, boolean, object, array, null)"#
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1, "fields": {"a": []}}]}]}"#,
                "at least one JSON type"
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1, "fields": {"a": 1}}]}]}"#,
                "must be a JSON type name"
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1, "fields": {"a": {"type": "string", "optinal": true}}}]}]}"#,
                #"unknown key "optinal""#
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1, "fields": {"a": {"type": "string", "optional": "yes"}}}]}]}"#,
                "optional must be true or false"
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1, "fields": {"a": {"optional": true}}}]}]}"#,
                #"needs "type""#
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1, "additionalFields": "no"}]}]}"#,
                "additionalFields must be true or false"
            ),
            (
                #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1, "fields": []}]}]}"#,
                "fields must be an object"
            ),
        ])
    func invalidFiles(text: String, expected: String) throws {
        let error = try #require(throws: SchemaFileError.self) {
            try Fixture.schemas(text, source: "/etc/syncd/bad.json")
        }
        #expect(error.description.contains("/etc/syncd/bad.json"))
        #expect(error.description.contains(expected), "\(error)")
    }

    @Test("A file in a newer format is refused, saying which format this release reads")
    func newerFormat() throws {
        let error = try #require(throws: SchemaFileError.self) { try Fixture.schemas(#"{"format": 2, "types": []}"#) }
        #expect(error == .newerFormat(source: "shopping.json", format: 2))
        #expect(error.description.contains("it reads 1"))
    }

    @Test("Merging sets joins their types and versions; the same declaration twice is fine")
    func mergingSets() throws {
        let first = try Fixture.schemas()
        let second = try Fixture.schemas(
            #"""
            {"format": 1, "types": [
              {"type": "ShoppingItem", "versions": [
                {"schemaVersion": 2, "fields": {"aisle": {"type": "integer", "optional": true}, "amount": {"type": ["null", "string"], "optional": true}, "name": "string"}},
                {"schemaVersion": 3, "fields": {"name": "string", "quantity": "integer"}}
              ]},
              {"type": "Recipe", "versions": [{"schemaVersion": 1}]}
            ]}
            """#, source: "more.json")
        let merged = try first.merging(second)
        #expect(merged.typeNames == ["Reading", "Recipe", "ShoppingItem"])
        #expect(merged.declaredVersions(of: "ShoppingItem") == [1, 2, 3])
        #expect(
            merged.violation(of: Fixture.version(schemaVersion: 3, fields: #"{"name": "x"}"#))
                == #"field "quantity" is required in schemaVersion 3 of ShoppingItem, and is missing"#)
        #expect(try merged.merging(merged).declaredVersions(of: "ShoppingItem") == [1, 2, 3])
        #expect(try SchemaSet().merging(first).typeNames == first.typeNames)
    }

    @Test("Merging refuses one version declared two ways, naming both files")
    func mergingConflictingDeclarations() throws {
        let other = try Fixture.schemas(
            #"{"format": 1, "types": [{"type": "ShoppingItem", "versions": [{"schemaVersion": 1, "fields": {"name": "integer"}}]}]}"#,
            source: "other.json")
        let error = try #require(throws: SchemaFileError.self) { try Fixture.schemas().merging(other) }
        #expect(
            error
                == .conflictingDeclarations(
                    type: "ShoppingItem", schemaVersion: 1, first: "shopping.json", second: "other.json"))
        let loose = try Fixture.schemas(
            #"{"format": 1, "types": [{"type": "ShoppingItem", "versions": [{"schemaVersion": 1, "additionalFields": false, "fields": {"name": "string", "amount": {"type": ["string", "null"], "optional": true}}}]}]}"#,
            source: "strict.json")
        #expect(throws: SchemaFileError.self) { try Fixture.schemas().merging(loose) }
    }

    @Test("The field shorthand and the object form mean the same; optional defaults to false")
    func shorthand() throws {
        let short = try Fixture.schemas(
            #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1, "fields": {"a": ["string", "integer"]}}]}]}"#
        )
        let long = try Fixture.schemas(
            #"{"format": 1, "types": [{"type": "T", "versions": [{"schemaVersion": 1, "fields": {"a": {"type": ["integer", "string"], "optional": false}}}]}]}"#,
            source: "long.json")
        #expect(throws: Never.self) { try short.merging(long) }
        let missing = Fixture.version("T", fields: "{}")
        #expect(short.violation(of: missing) == long.violation(of: missing))
        #expect(
            short.violation(of: Fixture.version("T", fields: #"{"a": true}"#))?.contains(
                "must be a string or an integer, not a boolean (true)") == true)
    }
}
