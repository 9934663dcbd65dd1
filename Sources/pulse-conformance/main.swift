import Foundation
import PulseConformanceCLI

exit(ConformanceCommand.main(Array(CommandLine.arguments.dropFirst())))
