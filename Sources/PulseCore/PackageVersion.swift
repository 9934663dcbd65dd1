import PulseCrypto

/// `packageVersion`: the strong ETag of a manifest, derived from its content.
///
/// It is the lowercase hex SHA-256 of the manifest's canonical encoding (`JSONValue.canonicalBytes`)
/// with the `packageVersion` field itself left out. Same content, same value; any change, a new value.
public enum PackageVersion {
    public static let field = "packageVersion"

    /// The version of `manifest` (any `packageVersion` already in it is ignored).
    public static func of(_ manifest: JSONValue) -> String {
        guard case var .object(fields) = manifest else { return SHA256.hex(manifest.canonicalBytes) }
        fields[field] = nil
        return SHA256.hex(JSONValue.object(fields).canonicalBytes)
    }

    /// `manifest` with its `packageVersion` set, and that version.
    public static func stamped(_ manifest: JSONValue) -> (manifest: JSONValue, packageVersion: String) {
        let version = of(manifest)
        guard case var .object(fields) = manifest else { return (manifest, version) }
        fields[field] = .string(version)
        return (.object(fields), version)
    }
}
