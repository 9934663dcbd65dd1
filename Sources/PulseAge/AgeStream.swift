import Foundation
import PulseCrypto

/// The age payload: a 16-byte nonce, then STREAM of 64 KiB ChaCha20-Poly1305 chunks under
/// `HKDF-SHA-256(ikm = file key, salt = nonce, info = "payload")` (c2sp.org/age, "Payload").
enum AgeStream {
    static let chunkSize = 64 * 1024
    static let sealedChunkSize = chunkSize + ChaCha20Poly1305.tagByteCount
    static let nonceSize = 16

    static func payloadKey(fileKey: SecretBytes, nonce: some Collection<UInt8>) throws -> [UInt8] {
        try HKDF.sha256(inputKeyMaterial: fileKey, salt: Array(nonce), info: Array("payload".utf8), count: 32)
    }

    /// The chunk nonce: 11-byte big-endian counter, then 0x01 for the final chunk, 0x00 otherwise.
    static func chunkNonce(counter: UInt64, last: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { nonce[10 - index] = UInt8(truncatingIfNeeded: counter >> UInt64(8 * index)) }
        nonce[11] = last ? 1 : 0
        return nonce
    }

    /// The payload's size for a plaintext of `count` bytes: nonce, then each chunk and its tag.
    static func sealedSize(plaintextByteCount count: Int) -> Int {
        nonceSize + count + max(1, (count + chunkSize - 1) / chunkSize) * ChaCha20Poly1305.tagByteCount
    }

    /// Nonce ‖ sealed chunks. An empty plaintext is one empty final chunk.
    static func encrypt(_ plaintext: [UInt8], fileKey: SecretBytes) throws -> [UInt8] {
        let nonce = try SecureRandom.bytes(nonceSize)
        let key = try payloadKey(fileKey: fileKey, nonce: nonce)
        var out = nonce
        out.reserveCapacity(nonceSize + plaintext.count + (plaintext.count / chunkSize + 1) * 16)
        var start = 0
        var counter: UInt64 = 0
        repeat {
            let end = min(start + chunkSize, plaintext.count)
            let last = end == plaintext.count
            out += try ChaCha20Poly1305.seal(
                plaintext[start..<end], key: key, nonce: chunkNonce(counter: counter, last: last))
            start = end
            counter += 1
        } while start < plaintext.count
        return out
    }

    /// Decrypts nonce ‖ chunks, refusing truncation, trailing data and a non-initial empty final chunk.
    static func decrypt(_ payload: ArraySlice<UInt8>, fileKey: SecretBytes) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count)
        try decrypt(payload, fileKey: fileKey) { out += $0 }
        return out
    }

    /// Decrypts nonce ‖ chunks, handing each chunk's plaintext to `deliver` once it has
    /// authenticated, in order, as a streaming reader would release it; throws at the first problem.
    /// A full-size chunk whose final flag contradicts its place (a final chunk with more data after
    /// it, a non-final one at the end of the file) is authentic, so it is delivered before the error,
    /// as the reference implementation does; a short chunk can only be final and is never delivered
    /// under the other flag. The CCTV vectors check exactly what was delivered.
    static func decrypt(_ payload: ArraySlice<UInt8>, fileKey: SecretBytes, deliver: ([UInt8]) -> Void) throws {
        guard payload.count >= nonceSize else { throw AgeError.malformedHeader("the file ends before the 16-byte payload nonce") }
        let key = try payloadKey(fileKey: fileKey, nonce: payload.prefix(nonceSize))
        let body = payload.dropFirst(nonceSize)
        guard !body.isEmpty else { throw AgeError.damagedPayload("truncated: the payload has no chunks") }
        var start = body.startIndex
        var counter: UInt64 = 0
        while true {
            let remaining = body.endIndex - start
            let last = remaining <= sealedChunkSize
            let chunk = body[start..<start + min(remaining, sealedChunkSize)]
            guard chunk.count >= ChaCha20Poly1305.tagByteCount else {
                throw AgeError.damagedPayload("truncated: chunk \(counter) is shorter than its tag")
            }
            guard let plain = try? open(chunk, key: key, counter: counter, last: last) else {
                // Say what the other flag would have meant: a clearer error, same refusal.
                if let authentic = try? open(chunk, key: key, counter: counter, last: !last) {
                    if chunk.count == sealedChunkSize { deliver(authentic) }
                    throw AgeError.damagedPayload(last
                        ? "truncated: the file ends before its final chunk"
                        : "trailing data after the final chunk")
                }
                throw AgeError.damagedPayload("chunk \(counter) failed authentication")
            }
            if last {
                guard !plain.isEmpty || counter == 0 else {
                    throw AgeError.damagedPayload("the final chunk is empty (only allowed for an empty payload)")
                }
                deliver(plain)
                return
            }
            deliver(plain)
            start += sealedChunkSize
            counter += 1
        }
    }

    static func open(_ chunk: ArraySlice<UInt8>, key: [UInt8], counter: UInt64, last: Bool) throws -> [UInt8] {
        try ChaCha20Poly1305.open(chunk, key: key, nonce: chunkNonce(counter: counter, last: last))
    }
}
