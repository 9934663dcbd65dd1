import Foundation
import PulseCore
import PulseCrypto
import Testing

struct DigestTests {
    let name = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"  // SHA-256("test")

    @Test func aBlobNameIsExactly64LowercaseHexDigits() {
        #expect(Digest(hex: name)?.hex == name)
        #expect(Digest(of: Array("test".utf8)) == Digest(hex: name))
        #expect(Digest(bytes: SHA256.hash(Array("test".utf8))) == Digest(hex: name))
        for bad in ["", String(name.dropLast()), name + "0", name.uppercased(), "g" + name.dropFirst(),
                    String(name.dropLast()) + "\n", "../" + name.dropFirst(3), String(name.dropLast()) + "٣"] {
            #expect(Digest(hex: bad) == nil, "accepted \(bad.debugDescription)")
        }
        #expect(Digest(bytes: [1, 2, 3]) == nil)
    }

    @Test func decodingRefusesWhatIsNotABlobName() throws {
        let good = #"{"sessionId":"s","deckVersion":1,"packageVersion":"v","slides":[{"n":0,"assetHash":"\#(name)","keyB64":"k","nonceB64":"n"}]}"#
        #expect(try JSONValue.decode(KeyTable.self, from: Array(good.utf8)).slides.first?.assetHash.hex == name)
        let bad = good.replacingOccurrences(of: name, with: "../" + name.dropFirst(3))
        #expect(throws: (any Error).self) { try JSONValue.decode(KeyTable.self, from: Array(bad.utf8)) }
    }

    @Test func orderIsTheTextsOrder() {
        let low = Digest(hex: String(repeating: "0", count: 64))!, high = Digest(hex: String(repeating: "f", count: 64))!
        #expect(low < high && [high, low].sorted() == [low, high])
    }
}
