/// The one error type of PulseQR.
public enum QRError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is longer than the largest QR code (version 40) holds at the chosen error correction
    /// level, in 8-bit mode: `maximum` bytes (2,953 at `.low`, 2,331 at `.medium`, 1,663 at `.quartile`,
    /// 1,273 at `.high`).
    case tooLong(bytes: Int, maximum: Int)
    /// There was nothing to encode.
    case empty
    /// libqrencode failed for another reason (out of memory); the text is its errno's.
    case library(String)

    public var description: String {
        switch self {
        case let .tooLong(bytes, maximum): "QR code: \(bytes) bytes is too long (at most \(maximum) at this error correction level)"
        case .empty: "QR code: nothing to encode"
        case let .library(text): "QR code: libqrencode: \(text)"
        }
    }
}
