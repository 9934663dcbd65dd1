import Foundation

/// What a published file is, which decides how it is served.
public struct PublishedKind: Sendable, Equatable {
    /// Blobs are stored read-only (0444) in a folder target.
    public var isBlob: Bool
    public var contentType: String
    public var cacheControl: String

    /// `assets/<sha256>`: never changes, cached forever. Slide ciphertext is `application/octet-stream`;
    /// a public image gets the `contentType` its manifest reference gives.
    public static func blob(contentType: String?) -> PublishedKind {
        PublishedKind(isBlob: true, contentType: contentType ?? "application/octet-stream",
                      cacheControl: "public, max-age=31536000, immutable")
    }

    public static let blob = blob(contentType: nil)
    /// `refs/<sha256>.json`, `appconfig/<org>/<packageVersion>.json`: named by their content, never change.
    public static let manifest = PublishedKind(isBlob: false, contentType: "application/json", cacheControl: "public, max-age=31536000, immutable")
    /// `index.json`: the commit point, replaced on every publish.
    public static let index = PublishedKind(isBlob: false, contentType: "application/json", cacheControl: "no-cache")
}

/// Where `push` publishes a package's public part and what `gc` cleans: a folder or an S3 bucket prefix,
/// both laid out like `<package>/public/` (`index.json`, `assets/<sha256>`, `refs/<sha256>.json`,
/// `appconfig/<org>/<packageVersion>.json`).
/// Paths are relative to the target root and use `/`.
public protocol PushTarget: Sendable {
    /// How errors and reports name the target (a folder path or `s3://bucket/prefix`).
    var displayName: String { get }
    /// Makes the target usable before any work (creates a folder target).
    func prepare() throws
    /// The size of the file at `path`, or nil if there is none (stat or HEAD).
    func size(of path: String) throws -> Int?
    /// The bytes at `path`, or nil if there is none.
    func read(_ path: String) throws -> Data?
    /// Publishes `data` at `path` all-or-nothing: a reader sees the old file (or none) or the new one.
    /// Throws if the target did not keep exactly `data` as far as its answer tells.
    func write(_ path: String, data: Data, kind: PublishedKind) throws
    /// Every file under `prefix` (recursively), with its size and publish time. A listing that cannot
    /// be read completely throws: it is never a shorter list.
    func list(under prefix: String) throws -> [TargetObject]
    /// Removes the file at `path` (no error if it is already gone).
    func delete(_ path: String) throws
    /// Takes the target's lease for `operation` (`push` or `gc`), waiting up to `wait` seconds while
    /// another holds it; then throws `OpsError` of kind `.busy` naming the holder.
    func acquireLease(for operation: String, wait: TimeInterval) throws -> any TargetLease
}

extension PushTarget {
    /// `<displayName>/<path>`: how errors name a file of the target.
    func describe(_ path: String) -> String { path.isEmpty ? displayName : "\(displayName)/\(path)" }
}
