import Foundation
import PulseDeviceCLI

exit(DeviceCommand.main(Array(CommandLine.arguments.dropFirst())))
