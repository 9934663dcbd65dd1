import Foundation
import PulseCore
import PulseCrypto

/// The slide keys the server released (contract section 4), held in memory only: `SecretBytes`, wiped
/// when dropped, never written to disk, never printed.
public struct ReleasedKeys: Sendable {
    public struct SlideKey: Sendable {
        let key: SecretBytes
        let nonce: SecretBytes
    }

    public let session: String
    public let deckVersion: Int
    let keys: [Int: SlideKey]

    /// The released slide numbers, in order.
    public var slides: [Int] { keys.keys.sorted() }

    /// `GET /api/sync/keys?session=ID`, signed; with `answers`, its `Pulse-Signature` is checked (and the
    /// answer recorded) before any key is used.
    /// - Throws: `DeviceError.server` for a refusal or an answer that breaks the contract's shape,
    ///   `DeviceError.integrity` naming the rule when the answer breaks one of signed answers.
    public static func fetch(
        session: String, client: SyncClient, answers: AnswerGuard? = nil, cancellation: Cancellation? = nil
    ) throws -> ReleasedKeys {
        let target = "/api/sync/keys?session=\(session)"
        let response = try client.signed("GET", target, cancellation: cancellation)
        guard response.status == 200 else { throw SyncClient.problem(response, "GET \(target)") }
        do { try answers?.accept(response, to: target) } catch let refusal as AnswerRefusal { throw refusal.deviceError }
        return try parse(response.body, session: session, what: "GET \(target)")
    }

    /// `{"deckVersion": n, "released": [{"n", "keyB64", "nonceB64"}, …]}`.
    static func parse(_ body: [UInt8], session: String, what: String) throws -> ReleasedKeys {
        guard let json = try? JSONValue.parse(body), let deckVersion = json["deckVersion"]?.intValue, let released = json["released"]?.arrayValue else {
            throw DeviceError(.server, "\(what): not {\"deckVersion\", \"released\": […]}")
        }
        var keys: [Int: SlideKey] = [:]
        for entry in released {
            guard let n = entry["n"]?.intValue, n >= 0, var key = entry["keyB64"]?.stringValue.flatMap({ Data(base64Encoded: $0) }).map(Array.init),
                  var nonce = entry["nonceB64"]?.stringValue.flatMap({ Data(base64Encoded: $0) }).map(Array.init)
            else { throw DeviceError(.server, "\(what): a released entry is not {n, keyB64, nonceB64}") }
            guard key.count == AES256GCM.keyByteCount, nonce.count == AES256GCM.nonceByteCount else {
                SecretBytes.wipe(&key)
                SecretBytes.wipe(&nonce)
                throw DeviceError(.server, "\(what): slide \(n)'s key or nonce has the wrong length")
            }
            guard keys[n] == nil else { throw DeviceError(.server, "\(what): slide \(n) is released twice") }
            keys[n] = SlideKey(key: SecretBytes(wiping: &key), nonce: SecretBytes(wiping: &nonce))
        }
        return ReleasedKeys(session: session, deckVersion: deckVersion, keys: keys)
    }

    /// Refuses keys for another deck than the cached manifest's: they would not open its blobs, and
    /// "decrypt failed" would hide the real cause.
    public func check(against manifest: Manifest) throws {
        guard manifest.deckVersion == deckVersion else {
            throw DeviceError(.staleDeck,
                "the server's keys for session \(session) are for deckVersion \(deckVersion), the cached manifest is deckVersion "
                    + "\(manifest.deckVersion.map(String.init) ?? "?"): run pulse-device sync --session \(session) first")
        }
    }

    /// Decrypts slide `n` of `manifest` in memory (AES-256-GCM, the blob exactly as cached).
    /// - Throws: `.notReleased` when its key is not released, `.integrity` when the blob is missing or damaged
    ///   or the key does not open it.
    public func open(slide n: Int, of manifest: Manifest, cache: DeviceCache) throws -> SecretBytes {
        try check(against: manifest)
        let slides = manifest.slides
        guard let slide = slides.first(where: { $0.n == n }) else {
            throw DeviceError(.badInput, "session \(session) has slides 0–\(slides.count - 1) in deckVersion \(deckVersion); there is no slide \(n)")
        }
        guard let key = keys[n] else {
            throw DeviceError(.notReleased,
                "slide \(n) of session \(session) is not released (the server released \(Self.describe(self.slides)) of deckVersion \(deckVersion))")
        }
        let blob = try cache.blob(slide.asset)
        do {
            var plaintext = try AES256GCM.open(blob, key: key.key, nonce: key.nonce)
            return SecretBytes(wiping: &plaintext)
        } catch {
            throw DeviceError(.integrity, "slide \(n)'s released key does not open its cached blob \(slide.asset.hash.hex.prefix(12))… (\(error))")
        }
    }

    /// `none`, `slide 0`, `slides 0–4`, `slides 0–2, 5`.
    public static func describe(_ slides: [Int]) -> String {
        guard !slides.isEmpty else { return "no slides" }
        var runs: [String] = []
        var start = slides[0], end = slides[0]
        for n in slides.dropFirst() {
            if n == end + 1 { end = n; continue }
            runs.append(start == end ? "\(start)" : "\(start)–\(end)")
            (start, end) = (n, n)
        }
        runs.append(start == end ? "\(start)" : "\(start)–\(end)")
        return (slides.count == 1 ? "slide " : "slides ") + runs.joined(separator: ", ")
    }
}

/// What a decrypted slide is, by its first bytes (docs/manifests.md: a one-page PDF or an image). The raw
/// value is how the command line and its JSON name it.
public enum SlideKind: String, Sendable, CustomStringConvertible {
    case pdf = "PDF"
    case png = "PNG"
    case jpeg = "JPEG"
    case webp = "WebP"
    /// None of those: bytes the app cannot show.
    case data

    public static func of(_ plaintext: SecretBytes) -> SlideKind {
        let head = plaintext.prefix(12)
        if head.starts(with: Array("%PDF".utf8)) { return .pdf }
        if head.starts(with: [0x89, 0x50, 0x4e, 0x47]) { return .png }
        if head.starts(with: [0xff, 0xd8, 0xff]) { return .jpeg }
        if head.count >= 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) { return .webp }
        return .data
    }

    public var description: String { rawValue }
}
