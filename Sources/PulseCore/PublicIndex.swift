/// `public/index.json` (`index.json` on a push target): the public commit point. It names the current
/// app config of each organization and, for every version of every document, its blob list, publish time
/// and public files, so that push and gc on a target never need a manifest. Nothing in it is
/// device-scoped. Written by the build as a projection of `server/index.json` (`PackageIndex.publicIndex`).
public struct PublicIndex: Codable, Equatable, Sendable {
    public static let currentFormat = "pulse-public/1"

    public struct Version: Codable, Equatable, Sendable {
        /// `refs/<refs>.json`: the blobs this version names.
        public var refs: String
        /// UTC seconds, as in the server index.
        public var publishedAt: String
        /// Public files of this version besides its blobs (an app config's own file), relative to the root.
        public var files: [String]?

        public init(refs: String, publishedAt: String, files: [String]? = nil) {
            self.refs = refs
            self.publishedAt = publishedAt
            self.files = files
        }
    }

    public var format: String
    public var packageId: PackageID
    public var appconfig: [String: PackageIndex.Document]
    /// `<kind>/<id>` → versions, newest first.
    public var history: [String: [Version]]

    public init(packageId: PackageID, appconfig: [String: PackageIndex.Document] = [:], history: [String: [Version]] = [:]) {
        self.format = Self.currentFormat
        self.packageId = packageId
        self.appconfig = appconfig
        self.history = history
    }

    /// The file's bytes: canonical JSON (sorted keys, two-space indent, final newline).
    public var fileBytes: [UInt8] {
        JSONValue.object([
            "format": .string(format), "packageId": .string(packageId.hex),
            "appconfig": .object(appconfig.mapValues { ["packageVersion": .string($0.packageVersion)] }),
            "history": .object(history.mapValues { versions in
                .array(versions.map { version in
                    var fields: [String: JSONValue] = ["refs": .string(version.refs), "publishedAt": .string(version.publishedAt)]
                    if let files = version.files { fields["files"] = .array(files.map(JSONValue.string)) }
                    return .object(fields)
                })
            }),
        ]).prettyBytes
    }
}
