import CQPDF

/// A PDF opened with libqpdf, from which single pages are written as standalone PDFs.
///
/// Not thread-safe (qpdf objects are not): open one document per thread. Output is deterministic:
/// the same input page always gives the same bytes (the file identifier is derived from the content).
public final class PDFDocument {
    /// How many pages the document has.
    public let pageCount: Int
    /// The document (internal for the tests' reference writer, Tests/PulsePDFTests/PDFDocument+QPDFWrite.swift).
    let handle: QPDFHandle

    /// Opens a PDF from memory.
    /// - Parameter name: used in error messages (usually the file path).
    /// - Throws: `PDFError.encrypted` for a password-protected file, `.damaged` for anything qpdf cannot read
    ///   without guessing (recovery of broken cross-reference tables is off: a truncated file is an error).
    public convenience init(bytes: [UInt8], name: String) throws {
        let handle = QPDFHandle(input: bytes)
        qpdf_set_attempt_recovery(handle.pointer, QPDF_FALSE)
        let input = handle.input!
        let status = qpdf_read_memory(
            handle.pointer, name, input.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(bytes.count), nil)
        try self.init(handle: handle, status: status)
    }

    /// Opens the PDF file at `path`, which qpdf reads as it needs (as `qpdf --split-pages` does): the
    /// document is never held in memory whole, however large the deck. The file must not change while
    /// the document is open (a reader that sees another page count is an error to its caller).
    public convenience init(path: String) throws {
        let handle = QPDFHandle()
        qpdf_set_attempt_recovery(handle.pointer, QPDF_FALSE)
        let status = qpdf_read(handle.pointer, path, nil)
        try self.init(handle: handle, status: status)
    }

    private init(handle: QPDFHandle, status: QPDF_ERROR_CODE) throws {
        if status & QPDF_ERRORS != 0 {
            let message = handle.takeError() ?? "cannot be read"
            if message.contains("invalid password") { throw PDFError.encrypted }
            throw PDFError.damaged(message)
        }
        if qpdf_is_encrypted(handle.pointer) != QPDF_FALSE {
            // Opened with an empty user password: still an encrypted export we must not repackage as is.
            throw PDFError.encrypted
        }
        let count = qpdf_get_num_pages(handle.pointer)
        if count < 0 { throw PDFError.damaged(handle.takeError() ?? "cannot list pages") }
        pageCount = Int(count)
        self.handle = handle
    }

    /// Page `index` (from 0) as a standalone one-page PDF carrying only what the page draws, in a
    /// canonical form: the same page gives the same bytes whatever else the document holds and however
    /// it is numbered (see `PageWriter` and `PageIsolation`).
    /// - Throws: `PDFError.damaged` when the page or an object it draws cannot be read. There is no
    ///   fallback to another writer: any other way of writing the page would not isolate it.
    public func page(_ index: Int) throws -> [UInt8] {
        precondition(index >= 0 && index < pageCount, "page index out of range")
        return try writer.write(page: index)
    }

    /// Page `index` written by `PageWriter` (what `page(_:)` returns).
    func pageWrittenByPageWriter(_ index: Int) throws -> [UInt8] {
        try writer.write(page: index)
    }

    private lazy var writer = PageWriter(qpdf: handle.pointer, pageCount: pageCount)
}

/// Owns one `qpdf_data`, and the input buffer qpdf reads lazily for as long as it lives.
final class QPDFHandle {
    var pointer: qpdf_data?
    let input: UnsafeMutableRawBufferPointer?

    init(input bytes: [UInt8]? = nil) {
        pointer = qpdf_init()
        qpdf_silence_errors(pointer)
        qpdf_set_suppress_warnings(pointer, QPDF_TRUE)
        input = bytes.map { bytes in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
            buffer.copyBytes(from: bytes)
            return buffer
        }
    }

    deinit {
        qpdf_cleanup(&pointer)
        input?.deallocate()
    }

    /// The pending error's full text, or nil if there is none.
    func takeError() -> String? {
        guard qpdf_has_error(pointer) != QPDF_FALSE, let error = qpdf_get_error(pointer) else { return nil }
        guard let text = qpdf_get_error_message_detail(pointer, error) else { return "unknown qpdf error" }
        return String(cString: text)
    }
}

/// Why a PDF cannot be split.
public enum PDFError: Error, Equatable, CustomStringConvertible {
    /// The file is password-protected or encrypted.
    case encrypted
    /// qpdf could not read the file (corrupt, truncated, not a PDF).
    case damaged(String)

    public var description: String {
        switch self {
        case .encrypted: "the PDF is password-protected or encrypted; export it without a password"
        case let .damaged(detail): "not a readable PDF (\(detail))"
        }
    }
}
