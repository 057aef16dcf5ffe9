// A new chat's page: which model answers and how it is, example prompts as cards, the
// places to set Parley up as cards, and where the chats are kept. Every card is a button
// the keyboard reaches (Tab) and Enter or Space presses; what it does is said as a link.
import QtQuick
import QtQuick.Controls.Basic

Column {
    id: page

    required property var content
    property var colours
    property var look

    signal linkActivated(string link)

    objectName: "welcome"
    spacing: look.spacing.l

    Text {
        objectName: "welcomeTitle"
        text: "Parley"
        color: page.colours.text
        font.pixelSize: page.look.type.heading
        font.weight: Font.DemiBold
    }

    // The model the next message goes to, with a dot in its state's colour.
    Row {
        objectName: "welcomeStatus"
        spacing: page.look.spacing.s
        width: parent.width
        Rectangle {
            width: 8
            height: 8
            radius: 4
            anchors.verticalCenter: parent.verticalCenter
            color: page.colours[page.content.tone] || page.colours.muted
        }
        Text {
            width: parent.width - 16
            wrapMode: Text.Wrap
            textFormat: Text.StyledText
            text: page.content.model !== ""
                  ? "Your next message goes to <b>" + page.content.model.replace(/&/g, "&amp;")
                        .replace(/</g, "&lt;") + "</b> — " + page.content.state
                  : page.content.state
            color: page.colours.muted
            font.pixelSize: page.look.type.ui
        }
    }

    Text {
        text: "Try one"
        color: page.colours.muted
        font.pixelSize: page.look.type.small
        font.weight: Font.DemiBold
        topPadding: page.look.spacing.s
    }
    Column {
        width: parent.width
        spacing: page.look.spacing.s
        Repeater {
            model: page.content.examples
            delegate: WelcomeCard {
                required property var modelData
                width: parent.width
                entry: modelData
                colours: page.colours
                look: page.look
                onClicked: page.linkActivated(modelData.link)
            }
        }
    }

    Text {
        text: "Set up"
        color: page.colours.muted
        font.pixelSize: page.look.type.small
        font.weight: Font.DemiBold
        topPadding: page.look.spacing.s
    }
    Grid {
        id: panels
        width: parent.width
        columns: width >= 520 ? 2 : 1
        spacing: page.look.spacing.s
        // The cards of a grid as high as its highest: a hint that wraps does not leave its
        // neighbour short.
        readonly property real tallest: {
            let high = 0
            for (let i = 0; i < cards.count; ++i) {
                const item = cards.itemAt(i)
                if (item)
                    high = Math.max(high, item.implicitHeight)
            }
            return high
        }
        Repeater {
            id: cards
            model: page.content.panels
            delegate: WelcomeCard {
                required property var modelData
                width: (panels.width - (panels.columns - 1) * panels.spacing) / panels.columns
                height: Math.max(implicitHeight, panels.tallest)
                entry: modelData
                colours: page.colours
                look: page.look
                onClicked: page.linkActivated(modelData.link)
            }
        }
    }

    Text {
        objectName: "welcomeKept"
        width: parent.width
        topPadding: page.look.spacing.s
        wrapMode: Text.Wrap
        text: page.content.kept
        color: page.colours.muted
        font.pixelSize: page.look.type.small
    }
}
