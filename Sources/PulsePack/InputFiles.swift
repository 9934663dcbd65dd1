import Foundation
import PulseCore
import PulseCrypto
import PulseImage
import PulseStore
import PulseSystem

/// The field formats of series and session files, each with the regular expression it implements
/// (whole string; `PatternTests` checks the two agree).
enum Patterns {
    /// `[a-z0-9][a-z0-9-]{0,63}`
    static let id = TextFormat { text in
        guard text.many(upTo: 1, isIdStart) == 1 else { return false }
        _ = text.many(upTo: 63) { isIdStart($0) || $0 == UInt8(ascii: "-") }
        return true
    }
    /// `#[0-9A-Fa-f]{6}`
    static let color = TextFormat { text in text.skip("#") && text.many(upTo: 6, TextScanner.isHexDigit) == 6 }
    /// `([01][0-9]|2[0-3]):[0-5][0-9]`
    static let clock = TextFormat { text in
        text.number(digits: 2, atMost: 23) && text.skip(":") && text.number(digits: 2, atMost: 59)
    }
    /// `[0-9]{4}-[0-9]{2}-[0-9]{2}`
    static let date = TextFormat(isDate)
    /// `[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})`
    static let time = TextFormat { text in
        guard isDate(&text), text.skip("T"), text.digits(2), text.skip(":"), text.digits(2) else { return false }
        if text.skip(":") {
            guard text.digits(2) else { return false }
            if text.skip("."), text.many(TextScanner.isDigit) == 0 { return false }
        }
        if text.skip("Z") { return true }
        return (text.skip("+") || text.skip("-")) && text.digits(2) && text.skip(":") && text.digits(2)
    }

    private static func isIdStart(_ byte: UInt8) -> Bool { TextScanner.isLowercaseLetter(byte) || TextScanner.isDigit(byte) }

    private static func isDate(_ text: inout TextScanner) -> Bool {
        text.digits(4) && text.skip("-") && text.digits(2) && text.skip("-") && text.digits(2)
    }
}

/// A public image a manifest refers to (speaker photo, logo): stored as a plain content-addressed blob.
struct PublicImage {
    let bytes: [UInt8]
    let hash: Digest
    let format: ImageFormat
    /// The file it was read from (the first, when several files hold the same image).
    let path: String

    /// `{ assetHash, bytes, contentType }` as it stands in a manifest.
    var reference: JSONValue {
        ["assetHash": JSONValue(hash), "bytes": .int(bytes.count), "contentType": .string(format.contentType)]
    }
}

/// Reads JSON input files and the files they point at, collecting the public images they need.
public final class InputLoader {
    let warnings: Warnings
    /// Public images larger than this are warned about (`--max-image-size`).
    let warnImageBytes: Int
    private(set) var images: [Digest: PublicImage] = [:]

    init(warnings: Warnings, warnImageBytes: Int = ImageLimits.defaultWarnBytes) {
        self.warnings = warnings
        self.warnImageBytes = warnImageBytes
    }

    /// Parses a JSON file into a reader of its top-level object.
    func readJSON(_ url: URL) throws -> JSONReader {
        let data = try Self.readFile(url)
        let value = try JSONValue.parse(data, file: url.path)
        return try JSONReader(file: url.path, value: value, warnings: warnings)
    }

    /// The image named by `key` (a path relative to the JSON file), as a manifest reference; nil if absent.
    func optionalImage(_ reader: JSONReader, _ key: String) throws -> JSONValue? {
        guard let path = try reader.optionalString(key) else { return nil }
        let url = Self.resolve(path, relativeTo: reader.file)
        let bytes: [UInt8]
        do {
            let size = try Self.fileSize(url)
            if size > ImageLimits.maxFileBytes {
                throw reader.error(key, "\(url.path) is \(Format.bytes(size)), over the \(Format.bytes(ImageLimits.maxFileBytes)) an image may have")
            }
            bytes = Array(try Self.readFile(url))
        } catch let error as InputError where error.file == url.path {
            throw reader.error(key, "\(error.message): \(url.path)")
        }
        let format: ImageFormat
        do {
            guard let header = try ImageHeader.read(bytes) else { throw ImageError.truncated }
            if let problem = ImageLimits.problem(with: header, name: url.lastPathComponent) { throw reader.error(key, "\(url.path) \(problem)") }
            format = try ImageFormat.validate(bytes)
        } catch let error as ImageError { throw reader.error(key, "\(url.path): \(error)") }
        if bytes.count > warnImageBytes {
            warnings.add("\(reader.file): \(reader.path.isEmpty ? key : "\(reader.path).\(key)"): \(url.path) is \(Format.bytes(bytes.count)), "
                + "over --max-image-size \(Format.bytes(warnImageBytes)): every phone downloads it, make it smaller")
        }
        let image = PublicImage(bytes: bytes, hash: Digest(of: bytes), format: format, path: url.path)
        if images[image.hash] == nil { images[image.hash] = image }
        return image.reference
    }

    static func resolve(_ path: String, relativeTo file: String) -> URL {
        if path.hasPrefix("/") { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
    }

    /// The size of a regular file, from stat: nothing is read.
    static func fileSize(_ url: URL) throws -> Int {
        let info: FileInfo
        do throws(PathError) { info = try FileInfo.of(url.path) } catch {
            throw InputError(file: url.path, error.errno == .noSuchFile ? "no such file" : "cannot read (\(error.errno))")
        }
        guard !info.isFolder else { throw InputError(file: url.path, "is a folder, expected a file") }
        return info.size
    }

    public static func readFile(_ url: URL) throws -> Data {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw InputError(file: url.path, "no such file")
        }
        guard !isFolder.boolValue else { throw InputError(file: url.path, "is a folder, expected a file") }
        do { return try Data(contentsOf: url) } catch {
            throw InputError(file: url.path, "cannot read (\(Errno.describe(error)))")
        }
    }

}

extension JSONValue {
    /// An object without its null fields (optional inputs that were absent).
    static func compact(_ fields: [String: JSONValue?]) -> JSONValue {
        .object(fields.compactMapValues { $0 })
    }
}
