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
    ToolTip.visible: hovered || visualFocus
    ToolTip.text: tip
    ToolTip.delay: 400
    Keys.onReturnPressed: clicked()
    Keys.onEnterPressed: clicked()

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
