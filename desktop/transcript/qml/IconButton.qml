// A small icon button under a message: its tooltip shows on hover and on keyboard focus,
// its name is read by screen readers, and a focus ring shows where the keyboard is.
import QtQuick
import QtQuick.Controls.Basic

AbstractButton {
    id: button

    required property string iconName
    required property string tip
    property var colours

    implicitWidth: 28
    implicitHeight: 28
    focusPolicy: Qt.StrongFocus
    hoverEnabled: true
    Accessible.role: Accessible.Button
    Accessible.name: tip
    Keys.onReturnPressed: clicked()
    Keys.onEnterPressed: clicked()

    // Its tooltip in the look (a small dark label, light in the dark theme), made only while
    // it is wanted: a chat has a few buttons a message. Below it, not over the words above.
    Loader {
        objectName: "tooltip"
        active: button.hovered || button.visualFocus
        sourceComponent: ToolTip {
            parent: button
            y: button.height + 4
            visible: true
            delay: 400
            text: button.tip
            padding: 6
            leftPadding: 8
            rightPadding: 8
            contentItem: Text {
                text: button.tip
                color: button.colours.background
                font.pixelSize: 12
            }
            background: Rectangle {
                radius: 6
                color: button.colours.text
            }
        }
    }

    background: Rectangle {
        radius: 6
        color: button.hovered || button.visualFocus ? button.colours.raised : "transparent"
        border.width: button.visualFocus ? 2 : 0
        border.color: button.colours.accent
    }
    contentItem: Item {
        Image {
            anchors.centerIn: parent
            source: "image://icons/" + button.iconName + "/"
                    + (button.hovered || button.visualFocus ? button.colours.text
                                                             : button.colours.muted).slice(1)
            sourceSize: Qt.size(16, 16)
        }
    }
}
