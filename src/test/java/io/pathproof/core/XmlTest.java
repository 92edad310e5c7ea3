package io.pathproof.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;

/** The one XML escaper (accept's and report's JUnit XML): the five entities, and nothing XML 1.0 forbids left in. */
class XmlTest {
    @Test
    void markupCharactersBecomeThePredefinedEntities() {
        assertThat(Xml.escape("<a href=\"x\">Tom's & Jerry's</a>", "?"))
                .isEqualTo("&lt;a href=&quot;x&quot;&gt;Tom&apos;s &amp; Jerry&apos;s&lt;/a&gt;");
    }

    @Test
    void whatXmlForbidsIsReplacedByTheCallersChoiceAndTheRestIsKept() {
        String in = "a\u001b[31mb\tc\nd\re\ufffef\uffffg\ud800h\ud83d\ude80i\u00e9";
        assertThat(Xml.escape(in, " ")).isEqualTo("a [31mb\tc\nd\re f g h\ud83d\ude80i\u00e9");
        assertThat(Xml.escape(in, "\ufffd")).isEqualTo("a\ufffd[31mb\tc\nd\re\ufffdf\ufffdg\ufffdh\ud83d\ude80i\u00e9");
    }

    @Test
    void nullIsEmpty() {
        assertThat(Xml.escape(null, " ")).isEmpty();
    }

    @Test
    void anythingEscapedParsesBackToItselfBarTheForbidden() throws Exception {
        String in = "<x y='1'> & \"q\" \u0007 \ud83d\ude80";
        String doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><t a=\"" + Xml.escape(in, " ") + "\">"
                + Xml.escape(in, " ") + "</t>";
        var root = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(new ByteArrayInputStream(doc.getBytes(StandardCharsets.UTF_8)))
                .getDocumentElement();
        String expected = in.replace('\u0007', ' ');
        assertThat(root.getAttribute("a")).isEqualTo(expected);
        assertThat(root.getTextContent()).isEqualTo(expected);
    }
}
