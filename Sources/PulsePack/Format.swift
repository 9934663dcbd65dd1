import Foundation
import PulseCore

/// Numbers as pulse-pack's messages and summaries show them.
public enum Format {
    /// SI units, as every tool prints them (`ByteCount`).
    public static func bytes(_ count: Int) -> String { ByteCount.format(count) }

    public static func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }

    /// The first 12 hex digits of a blob's digest.
    public static func short(_ digest: Digest) -> String { String(digest.hex.prefix(12)) }

    /// The first 12 characters of a packageVersion or blob-list name as the package's files give it: still text
    /// in `PackageIndex` and `KeyTable`, and verify shows what it found, checked or not.
    public static func short(version: String) -> String { String(version.prefix(12)) }
}
