import Foundation
import PulseCrypto
import PulseStore
import PulseSystem

/// A software P-256 key in a file, standing in for the secure element: PKCS#8 PEM, mode 0600, in the
/// device folder (0700). The file is created once (never overwritten) and checked at every load: a key
/// readable by group or others, or owned by someone else, is refused.
public struct FileDeviceKey: DeviceKey {
    public static let fileName = "device-key.pem"

    let key: P256.PrivateKey
    /// Where the key lives.
    public let path: String

    public var publicKeySPKI: [UInt8] { key.publicKey.derRepresentation }

    /// The public key, parsed.
    public var publicKey: P256.PublicKey { key.publicKey }

    public func sign(_ message: [UInt8]) throws -> [UInt8] { try key.signature(for: message) }

    /// Makes a new key and writes it to `path` (0600, fsynced, the folder fsynced). Refuses to replace a file.
    public static func create(at path: String) throws -> FileDeviceKey {
        let key: P256.PrivateKey
        let pem: SecretBytes
        do {
            key = try P256.PrivateKey()
            pem = try key.pemRepresentation()
        } catch {
            throw DeviceError(.storage, "cannot make a P-256 key: \(error)")
        }
        if FileManager.default.fileExists(atPath: path) {
            throw DeviceError(.deviceFolder, "\(path) exists already; a device key is never replaced")
        }
        let created: Bool
        do {
            // Staged, then linked to its name: a file that appeared meanwhile is not overwritten either.
            created = try AtomicFile.create(pem, at: URL(fileURLWithPath: path), mode: 0o600)
        } catch {
            throw DeviceError(.storage, "cannot write the device key: \(error)")
        }
        guard created else { throw DeviceError(.deviceFolder, "\(path) exists already; a device key is never replaced") }
        return FileDeviceKey(key: key, path: path)
    }

    /// Loads the key at `path` after checking its permissions.
    public static func load(at path: String) throws -> FileDeviceKey {
        try DeviceFolder.checkPrivate(path, isFolder: false)
        var pem: [UInt8]
        do { pem = Array(try Data(contentsOf: URL(fileURLWithPath: path))) } catch {
            throw DeviceError(.storage, "\(path): cannot read: \(Errno.describe(error))")
        }
        defer { SecretBytes.wipe(&pem) }
        do {
            return FileDeviceKey(key: try P256.PrivateKey(pemRepresentation: pem), path: path)
        } catch {
            throw DeviceError(.deviceFolder, "\(path): not a P-256 private key in PKCS#8 PEM (\(error))")
        }
    }
}
