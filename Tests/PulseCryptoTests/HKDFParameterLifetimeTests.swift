import Testing
@testable import PulseCrypto

/// HKDF-SHA256 against RFC 5869 appendix A. Guards the OSSL_PARAM key lifetime fix: with temporary
/// C strings as parameter names, every derivation failed.
@Suite struct HKDFParameterLifetimeTests {
    @Test func rfc5869TestCase1() throws {
        let okm = try HKDF.sha256(
            inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22), salt: Array(0x00...0x0c),
            info: Array(0xf0...0xf9), count: 42)
        #expect(Hex.encode(okm) == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    @Test func rfc5869TestCase3EmptySaltAndInfo() throws {
        let okm = try HKDF.sha256(inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22), salt: [], info: [], count: 42)
        #expect(Hex.encode(okm) == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }
}
