import RecordSchemas
import SnapshotFormat

/// Schema files and versions for the tests.
enum Fixture {
    /// ShoppingItem 1 and 2 (2 adds an optional aisle); Reading allows no other fields.
    static let shopping = """
        {
          "format": 1,
          "description": "the shopping list",
          "types": [
            {
              "type": "ShoppingItem",
              "versions": [
                {"schemaVersion": 1, "fields": {"name": "string", "amount": {"type": ["string", "null"], "optional": true}}},
                {"schemaVersion": 2, "fields": {
                  "name": {"type": "string", "description": "what to buy"},
                  "amount": {"type": ["string", "null"], "optional": true},
                  "aisle": {"type": "integer", "optional": true}
                }}
              ]
            },
            {
              "type": "Reading",
              "versions": [
                {"schemaVersion": 1, "additionalFields": false, "fields": {
                  "value": "number", "ok": "boolean", "tags": "array", "extra": "object", "gone": "null"
                }}
              ]
            }
          ]
        }
        """

    static func schemas(_ text: String = shopping, source: String = "shopping.json") throws -> SchemaSet {
        try SchemaSet.load(Array(text.utf8), source: source)
    }

    static func fields(_ json: String) -> JSONObject {
        guard case .object(let object) = try! StrictJSON.parse(json) else { fatalError("not an object: \(json)") }
        return object
    }

    static func version(
        _ type: String = "ShoppingItem", schemaVersion: Int64 = 1, deleted: Bool = false, fields json: String
    ) -> ReadOnly.Version {
        ReadOnly.Version(
            id: RecordID("3F2504E0-4F89-41D3-9A0C-0305E82C3301")!, type: type, schemaVersion: schemaVersion,
            deleted: deleted, fields: fields(json))
    }
}
