/// The Codable `ReadOnly` projection of the snapshot format: the wire contract as value types.
///
/// These types are used for nothing but the wire (reading, merging and writing snapshot files);
/// the store keeps its own row types, mapped in one place, so storage and wire evolve apart.
/// Unknown keys and `fields` ride along verbatim as ``JSONObject`` values.
public enum ReadOnly {}
