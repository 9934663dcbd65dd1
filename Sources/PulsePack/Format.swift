import Foundation
import PulseCore

/// Numbers as pulse-pack's messages and summaries show them.
public enum Format {
    /// SI units, as every tool prints them (`ByteCount`).
    public static func bytes(_ count: Int) -> String { ByteCount.format(count) }

    public static func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }

    /// The first 12 characters of a hash or version.
    public static func short(_ hash: String) -> String { String(hash.prefix(12)) }
}
