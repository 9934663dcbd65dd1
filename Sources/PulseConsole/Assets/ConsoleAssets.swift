import PulseCrypto
import PulseHTTPServer

/// One embedded asset under `/console/assets/<sha256 hex>.<ext>`: the URL names the bytes, so it is
/// cached for a year as immutable, and a new build of the console is a new URL.
public struct ConsoleAsset: Sendable {
    /// Lowercase hex SHA-256 of `bytes`.
    public let hash: String
    /// `/console/assets/<hash>.<ext>`.
    public let path: String
    public let bytes: [UInt8]
    public let contentType: String
    let response: SharedResponse

    init(_ text: String, ext: String, contentType: String) {
        bytes = Array(text.utf8)
        hash = SHA256.hex(bytes)
        path = "/console/assets/\(hash).\(ext)"
        self.contentType = contentType
        response = SharedResponse(HTTPResponse(
            status: 200,
            headers: SecurityHeaders.common + [HTTPHeader("Content-Type", contentType), SecurityHeaders.immutable],
            body: .bytes(bytes)))
    }
}

/// The console's stylesheet and script (`StyleSheet.swift`, `Script.swift`).
public enum ConsoleAssets {
    public static let styleSheet = ConsoleAsset(StyleSheet.text, ext: "css", contentType: "text/css; charset=utf-8")
    public static let script = ConsoleAsset(Script.text, ext: "js", contentType: "text/javascript; charset=utf-8")
    public static let all = [styleSheet, script]

    /// The asset at `path`, if it is one.
    static func asset(at path: ArraySlice<UInt8>) -> ConsoleAsset? {
        all.first { path.elementsEqual($0.path.utf8) }
    }
}
