import CQRencode
import Glibc
import PulseSystem

/// A QR code's module matrix, made by libqrencode and copied out: a value with no C pointer in it.
///
///     let code = try QRCode("https://pulse.example/enroll#c=K7Q2-9XPM", errorCorrection: .medium)
///     code.size              // modules per side (21 for version 1 … 177 for version 40)
///     code.isDark(0, 0)      // true: the top-left finder pattern
///     code.svg(label: "Enrollment link for the keynote")   // a PulseHTML node (QRCode+SVG.swift)
///
/// The text is encoded as 8-bit bytes (its UTF-8, QR_MODE_8) with no mode switching, so any URL comes
/// back from a scanner byte for byte; libqrencode picks the smallest version that holds it.
public struct QRCode: Sendable, Equatable {
    /// How much of the symbol may be damaged and still read: about 7, 15, 25 and 30% of codewords.
    public enum ErrorCorrection: Sendable, CaseIterable {
        case low, medium, quartile, high

        /// The most bytes a version-40 symbol holds at this level in 8-bit mode (ISO/IEC 18004 table 7).
        public var maximumBytes: Int {
            switch self {
            case .low: 2953
            case .medium: 2331
            case .quartile: 1663
            case .high: 1273
            }
        }

        var level: QRecLevel {
            switch self {
            case .low: QR_ECLEVEL_L
            case .medium: QR_ECLEVEL_M
            case .quartile: QR_ECLEVEL_Q
            case .high: QR_ECLEVEL_H
            }
        }
    }

    /// Modules per side, without the quiet zone.
    public let size: Int
    /// The symbol's version, 1…40.
    public let version: Int
    public let errorCorrection: ErrorCorrection
    /// Row-major, `true` for a dark module.
    private let modules: [Bool]

    /// Encodes `text`'s UTF-8.
    /// - Throws: `QRError.tooLong` past the level's capacity, `.empty` for "".
    public init(_ text: String, errorCorrection: ErrorCorrection = .medium) throws(QRError) {
        try self.init(bytes: Array(text.utf8), errorCorrection: errorCorrection)
    }

    /// Encodes `bytes` as they are (a NUL included).
    public init(bytes: [UInt8], errorCorrection: ErrorCorrection = .medium) throws(QRError) {
        guard !bytes.isEmpty else { throw .empty }
        // Checked here, before the Int32 conversion and the C call: the capacity is a fixed table.
        guard bytes.count <= errorCorrection.maximumBytes else { throw .tooLong(bytes: bytes.count, maximum: errorCorrection.maximumBytes) }
        let matrix = try Self.encode(bytes, errorCorrection)
        (size, version, modules) = matrix
        self.errorCorrection = errorCorrection
    }

    /// Whether the module in column `x`, row `y` is dark; outside the symbol (the quiet zone) `false`.
    public func isDark(_ x: Int, _ y: Int) -> Bool {
        guard x >= 0, y >= 0, x < size, y < size else { return false }
        return modules[y * size + x]
    }

    /// The one call into libqrencode: encode, copy the low bit of each module, free.
    private static func encode(_ bytes: [UInt8], _ errorCorrection: ErrorCorrection) throws(QRError) -> (Int, Int, [Bool]) {
        errno = 0
        // version 0: the smallest that holds the data.
        guard let code = QRcode_encodeData(Int32(bytes.count), bytes, 0, errorCorrection.level) else {
            let code = errno
            if code == ERANGE { throw .tooLong(bytes: bytes.count, maximum: errorCorrection.maximumBytes) }
            throw .library(code == 0 ? "no symbol and no errno" : Errno(code).description)
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width), version = Int(code.pointee.version)
        guard (1...40).contains(version), width == 17 + 4 * version, let data = code.pointee.data else {
            throw .library("unexpected symbol (version \(version), width \(width))")
        }
        // Bit 0 of each byte is the module's colour; the other bits say what part of the symbol it is.
        let modules = (0..<width * width).map { data[$0] & 1 == 1 }
        return (width, version, modules)
    }
}
