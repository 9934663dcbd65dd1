import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// Where the package secret comes from: the 32 bytes every slide key is derived from.
///
/// In order: `--secret-file FILE`, the environment variable `PULSE_PACKAGE_SECRET` (base64), or the
/// package's own `secret` file, created (0600) on the first build. The file holds the base64 text.
public enum PackageSecret {
    public static let environmentVariable = "PULSE_PACKAGE_SECRET"

    /// Loads the secret, creating `<package>/secret` if no other source is given and none exists yet.
    public static func load(file: URL?, environment: [String: String], package: PulsePackage) throws -> [UInt8] {
        if let file { return try read(file, what: "--secret-file") }
        if let text = environment[environmentVariable] {
            return try decode(text, source: "$\(environmentVariable)")
        }
        if FileManager.default.fileExists(atPath: package.secretURL.path) {
            return try read(package.secretURL, what: "package secret")
        }
        let secret = try SecureRandom.bytes(SlideCipher.secretByteCount)
        try AtomicFile.write(Array((Data(secret).base64EncodedString() + "\n").utf8), to: package.secretURL, mode: 0o600)
        return secret
    }

    /// A new secret in base64, for `pulse-pack secret new`-style use and tests.
    public static func generateBase64() throws -> String {
        Data(try SecureRandom.bytes(SlideCipher.secretByteCount)).base64EncodedString()
    }

    private static func read(_ url: URL, what: String) throws -> [UInt8] {
        var info = stat()
        guard stat(url.path, &info) == 0 else { throw InputError(file: url.path, "\(what): \(String(cString: strerror(errno)))") }
        guard info.st_mode & 0o077 == 0 else {
            throw InputError(file: url.path, "\(what) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        let data = try InputLoader.readFile(url)
        return try decode(String(decoding: data, as: UTF8.self), source: url.path)
    }

    private static func decode(_ text: String, source: String) throws -> [UInt8] {
        guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)),
            data.count == SlideCipher.secretByteCount
        else {
            throw InputError(file: source, "a package secret is 32 bytes in base64")
        }
        return Array(data)
    }
}
