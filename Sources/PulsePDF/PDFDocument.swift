import CQPDF

/// A PDF opened with libqpdf, from which single pages are written as standalone PDFs.
///
/// Not thread-safe (qpdf objects are not): open one document per thread. Output is deterministic:
/// the same input page always gives the same bytes (the file identifier is derived from the content).
public final class PDFDocument {
    /// How many pages the document has.
    public let pageCount: Int
    private let handle: QPDFHandle

    /// Opens a PDF from memory.
    /// - Parameter name: used in error messages (usually the file path).
    /// - Throws: `PDFError.encrypted` for a password-protected file, `.damaged` for anything qpdf cannot read
    ///   without guessing (recovery of broken cross-reference tables is off: a truncated file is an error).
    public init(bytes: [UInt8], name: String) throws {
        let handle = QPDFHandle(input: bytes)
        qpdf_set_attempt_recovery(handle.pointer, QPDF_FALSE)
        let input = handle.input!
        let status = qpdf_read_memory(
            handle.pointer, name, input.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(bytes.count), nil)
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

    /// Page `index` written by qpdf's own copy-and-write, unpruned (slower; kept to compare against: it
    /// renders as the page does in the whole document).
    func pageWrittenByQPDF(_ index: Int) throws -> [UInt8] {
        precondition(index >= 0 && index < pageCount, "page index out of range")
        defer { qpdf_oh_release_all(handle.pointer) }
        let page = qpdf_get_page_n(handle.pointer, index)
        if let error = handle.takeError() { throw PDFError.damaged("page \(index + 1): \(error)") }

        let output = QPDFHandle()
        guard qpdf_empty_pdf(output.pointer) & QPDF_ERRORS == 0,
            qpdf_add_page(output.pointer, handle.pointer, page, QPDF_FALSE) & QPDF_ERRORS == 0
        else {
            throw PDFError.damaged("page \(index + 1): \(output.takeError() ?? handle.takeError() ?? "cannot copy")")
        }
        guard qpdf_init_write_memory(output.pointer) & QPDF_ERRORS == 0 else {
            throw PDFError.damaged("page \(index + 1): \(output.takeError() ?? "cannot start writing")")
        }
        // A placeholder /ID, replaced below by one derived from the content (see `FileIdentifier`).
        qpdf_set_static_ID(output.pointer, QPDF_TRUE)
        // Pass compressed streams through untouched: no decode/re-encode work, and bytes stay as exported.
        qpdf_set_decode_level(output.pointer, qpdf_dl_none)
        qpdf_set_suppress_original_object_IDs(output.pointer, QPDF_TRUE)
        guard qpdf_write(output.pointer) & QPDF_ERRORS == 0 else {
            throw PDFError.damaged("page \(index + 1): \(output.takeError() ?? "cannot write")")
        }
        let length = qpdf_get_buffer_length(output.pointer)
        guard let buffer = qpdf_get_buffer(output.pointer) else { throw PDFError.damaged("page \(index + 1): empty output") }
        var written = Array(UnsafeBufferPointer(start: buffer, count: length))
        guard FileIdentifier.replacePlaceholder(in: &written) else {
            throw PDFError.damaged("page \(index + 1): qpdf wrote no file identifier")
        }
        return written
    }
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
