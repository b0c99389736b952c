import GRDB
import SnapshotFormat

extension StoreSession {
    // MARK: Trusted keys

    /// The devices whose files this device merges, each with the key its files must be signed
    /// with; empty when this device merges every file, signed or not.
    public func trustedKeys() throws -> [DeviceID: PublicKey] {
        var keys: [DeviceID: PublicKey] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT device, key FROM trustedKey") {
            guard let device = DeviceID(row["device"]), let key = PublicKey(text: row["key"]) else {
                let name = (row["device"] as String?) ?? "(none)"
                throw StoreCorruption(
                    "the trusted key stored for device \"\(name)\" is not readable",
                    advice: DeviceID(name) != nil
                        ? "remove it with `syncctl untrust \(name)`, then trust \(name) again with the key `syncctl key` prints on it"
                        : "remove that row of the store's trustedKey table (sqlite3 store.sqlite \"DELETE FROM trustedKey WHERE device = '…'\"), then trust the device again")
            }
            keys[device] = key
        }
        return keys
    }

    /// The devices trusted, as stored: read even when a key is not readable (so that it can be
    /// untrusted).
    public func trustedDeviceNames() throws -> [String] {
        try String.fetchAll(db, sql: "SELECT device FROM trustedKey")
    }

    /// Trusts `key` for `device` (replacing the key trusted for it before, if any).
    public func trust(_ key: PublicKey, for device: DeviceID, at now: Timestamp) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO trustedKey (device, key, acceptedAt) VALUES (?, ?, ?)",
            arguments: [device.rawValue, key.text, now.milliseconds])
        try readEverySourceAgain()
    }

    /// Stops trusting `device`; whether it was trusted.
    @discardableResult
    public func untrust(_ device: DeviceID) throws -> Bool {
        try db.execute(sql: "DELETE FROM trustedKey WHERE device = ?", arguments: [device.rawValue])
        let removed = db.changesCount > 0
        if removed { try readEverySourceAgain() }
        return removed
    }

    /// Makes the next pass read every file again, whatever its stat (after a change of the keys
    /// trusted: a file rejected before may merge now, and one merged before may be rejected).
    public func readEverySourceAgain() throws {
        try db.execute(sql: "UPDATE source SET size = -1")
    }
}
