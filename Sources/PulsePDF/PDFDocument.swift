import CQPDF
import Foundation
import PulseSystem

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
        try self.init(shared: PDFBytes(bytes), name: name)
    }

    /// Opens a PDF from bytes that other documents of the same file share: qpdf reads them where they
    /// are, so several readers of one deck hold it in memory once (a copy per document held a 2,000-page
    /// deck of 83 MB twice over).
    public convenience init(shared bytes: PDFBytes, name: String) throws {
        let handle = QPDFHandle(input: bytes)
        qpdf_set_attempt_recovery(handle.pointer, QPDF_FALSE)
        let status = qpdf_read_memory(
            handle.pointer, name, bytes.buffer.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(bytes.count), nil)
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

/// A PDF's bytes in one buffer that never changes: qpdf documents read it in place, from any thread.
public final class PDFBytes: @unchecked Sendable {  // @unchecked: written once in init, only read afterwards
    let buffer: UnsafeMutableRawBufferPointer
    /// How many bytes the PDF has.
    public let count: Int

    public init(_ bytes: some ContiguousBytes) {
        count = bytes.withUnsafeBytes(\.count)
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 1)
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
    }

    /// The bytes of the file at `path`, read straight into the buffer (no second copy of a large deck
    /// while it is read). A file that grows while it is read is read to the size it had when opened.
    public init(readingFile path: String) throws(PDFReadError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PDFReadError(errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw PDFReadError(errno: errno) }
        let size = max(Int(info.st_size), 0)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 1)
        var done = 0
        while done < size {
            let got = read(fd, buffer.baseAddress! + done, size - done)
            if got < 0 && errno == EINTR { continue }
            if got < 0 {
                let failure = errno
                buffer.deallocate()
                throw PDFReadError(errno: failure)
            }
            if got == 0 { break }
            done += got
        }
        self.buffer = buffer
        count = done
    }

    deinit { buffer.deallocate() }

    /// The first `count` bytes (all if there are fewer): a header to check.
    public func prefix(_ count: Int) -> [UInt8] { Array(buffer.prefix(min(max(count, 0), self.count))) }
}

/// Why a PDF file could not be read: the system's error.
public struct PDFReadError: Error, CustomStringConvertible {
    public let errno: Int32
    public var description: String { Errno(errno).description }
}

/// Owns one `qpdf_data`, and keeps the input bytes qpdf reads lazily for as long as it lives.
final class QPDFHandle {
    var pointer: qpdf_data?
    let input: PDFBytes?

    init(input: PDFBytes? = nil) {
        pointer = qpdf_init()
        qpdf_silence_errors(pointer)
        qpdf_set_suppress_warnings(pointer, QPDF_TRUE)
        self.input = input
    }

    deinit {
        qpdf_cleanup(&pointer)
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
