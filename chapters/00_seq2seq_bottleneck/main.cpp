// Chapter 00 · The Seq2Seq bottleneck — a GRU encoder squeezes a whole sentence into one vector
// c = h_S; a GRU decoder translates from it. One sentence end to end, then BLEU, exact match and
// token accuracy by source length on the toy corpus's test split, and the bottleneck itself: which
// target positions the decoder still gets right as sentences grow.
//   build/bin/00_seq2seq_bottleneck              loads data/ch00/no_attention.safetensors (seconds)
//   build/bin/00_seq2seq_bottleneck --train      retrains it (minutes; progress bar on stderr)
// Export names: src_embeddings encoder_states context decoder_states decoder_logits
// position_accuracy; DIR/results.json holds the by-length figures (model "no_attention").
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/present/chapter_models.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("00", /*default_seed=*/1, /*total_steps=*/7);
  ChapterModels models(ch, {"no_attention"});
  ch.app().get_option("--seed")->description(_("which 9-word test sentence steps 1-4 follow (1: the first), and the seed of --train"));
  ch.set_question(_("Question: can one fixed vector carry a whole sentence — and what happens as sentences grow?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const ToyCorpus& corpus = models.corpus();
    const Vocab &sv = corpus.source_vocab, &tv = corpus.target_vocab;
    const ChapterModel cm = models.seq2seq("no_attention", nar);
    const Seq2Seq& m = cm.model;

    // ---------------------------------------------------------------- one sentence, end to end
    nar.step(_("The task: a toy translation with reorderings"), "x = (x_1 … x_S) ↦ y = (y_1 … y_T)");
    nar.say(_f("{} training, {} validation, {} test pairs; source lengths 4–60; {} source and {} target words",
                        corpus.train.size(), corpus.valid.size(), corpus.test.size(), sv.size() - 4, tv.size() - 4));
    nar.say(_("rules: adjectives follow their noun, verbs end their clause, and a verb ends in -a/-o by its subject's animacy"));
    const SentencePair& ex = pair_of_length(corpus.test, 9, nar.options().seed);
    nar.say(_f("source:    {}", fmt::join(ex.src, " ")));
    nar.say(_f("reference: {}", fmt::join(ex.tgt, " ")));
    nar.say(_("BLEU (Papineni et al. 2002) scores a translation by the 1- to 4-word sequences it shares with the reference, "
            "0-100; step 5 measures it."));
    nar.result(describe_model(cm));
    nar.code("attn/data/corpus.hpp: make_toy_corpus; attn/present/chapter_models.hpp: ChapterModels::seq2seq");
    nar.why(_("the reference moves words (adjective after noun, verb to the end of its clause), so word-by-word copying fails."));

    nar.step(_("Words become vectors"), _("e_j = E_src[x_j]  ∈ ℝ^32"));
    const std::vector<int> src_ids = sv.encode(ex.src);
    const DecodeTrace tr = greedy_trace(m, src_ids, ex.src.size() + 10);
    Mat emb = Mat::from_shape({tr.tape.xs.shape(1), tr.tape.xs.shape(2)});
    std::copy(tr.tape.xs.begin(), tr.tape.xs.end(), emb.begin());
    nar.show("src_embeddings", emb, ex.src, {}, _("one learned row per source word"));
    nar.code("attn/nn/embedding.hpp: embedding_forward; attn/models/seq2seq.hpp: greedy_trace");
    nar.why(_("the embedding table is trained with everything else; similar words end up with similar rows."));

    nar.step(_("The encoder reads left to right"), _("h_j = GRU(e_j, h_{j−1}),   c = h_S"), _("Cho et al. 2014; Sutskever et al. 2014"));
    const Mat H = slice_of(tr.tape.enc, 0);
    nar.show("encoder_states", H, ex.src, {}, fmt::format("h_1 … h_{} (S × {})", H.shape(0), H.shape(1)));
    const Vec c = row_of(H, H.shape(0) - 1);
    nar.show("context", c, {}, _f("c = h_{}: the only thing the decoder will ever see of the source", H.shape(0)));
    nar.code("attn/nn/gru.hpp: gru_sequence_forward; attn/models/seq2seq.hpp: seq2seq_encode");
    nar.why(_f("whatever the sentence's length, the decoder gets these {} numbers; a 60-word sentence must fit in them too.", c.size()));

    nar.step(_("The decoder writes word by word"), _("s_i = GRU([E_tgt y_{i−1}; c], s_{i−1}),  y_i = argmax softmax(W_o[s_i; c])"));
    Mat states = Mat::from_shape({tr.tape.steps.size(), m.cfg.dec_hidden});
    for (std::size_t i = 0; i < tr.tape.steps.size(); ++i)
      for (std::size_t k = 0; k < m.cfg.dec_hidden; ++k) states(i, k) = tr.tape.steps[i].s(0, k);
    Labels step_labels;
    for (std::size_t i = 0; i < tr.tape.steps.size(); ++i) step_labels.push_back("s_" + std::to_string(i + 1));
    nar.show("decoder_states", states, step_labels, {}, _("s_0 = c; one state per output word"));
    nar.record("decoder_logits", tr.logits);
    Table steps_tbl({"i", _("reads y_{i−1}"), _("writes y_i"), "p(y_i)", _("reference")});
    for (std::size_t i = 0; i < tr.tape.steps.size(); ++i) {
      const auto& row = tr.logits;
      std::size_t best = 0;
      double z = 0;
      for (std::size_t v = 0; v < row.shape(1); ++v) if (row(i, v) > row(i, best)) best = v;
      for (std::size_t v = 0; v < row.shape(1); ++v) z += std::exp(double(row(i, v)) - double(row(i, best)));
      steps_tbl.add({std::to_string(i + 1), tv.token(tr.inputs[i]), tv.token(int(best)), fmt::format("{:.3f}", 1.0 / z),
                     i < ex.tgt.size() ? ex.tgt[i] : "<eos>"});
    }
    nar.table(steps_tbl);
    const Tokens out = tv.decode(tr.ids);
    nar.result(_f("output:    {}", fmt::join(out, " ")));
    nar.result(_f("reference: {}   ({})", fmt::join(ex.tgt, " "), out == ex.tgt ? _("exact match") : _("differs")));
    nar.code("attn/models/seq2seq.hpp: seq2seq_decoder_step, greedy_trace");
    nar.why(_("in training the decoder reads the reference's previous word (teacher forcing); at test time it reads its "
            "own previous guess, so one wrong word can lead to more."));

    // ---------------------------------------------------------------- the experiment, measured
    nar.step(_("BLEU by sentence length"), _("BLEU = BP·exp(¼ Σ log p_n)"), _("Papineni et al. 2002"));
    const EvalResult r = evaluate_model(m, corpus.test, sv, tv);
    const std::vector<NamedResult> results = {{"no_attention", r}};
    nar.say(_f("greedy decoding of the {} test sentences of 5-60 words (the other {} of the {} are shorter); "
                        "corpus BLEU-4, exact match and token accuracy per bucket",
                        r.overall.sentences, corpus.test.size() - r.overall.sentences, corpus.test.size()));
    nar.table(length_table(results), /*as_result=*/true);
    nar.block(bleu_chart(results));
    const double first = r.buckets.front().bleu, last = r.buckets.back().bleu;
    // A relative drop needs a positive, finite starting BLEU (an all-zero model scores 0 everywhere).
    const bool drop_known = std::isfinite(first) && std::isfinite(last) && first > 0.0;
    const std::string drop = drop_known ? _f("{:.0f}% lower", 100.0 * (1.0 - last / first))
                                        : std::string(_("no relative drop: short sentences already score 0"));
    nar.result(_f("BLEU {} (5-10) -> {} (51-60): {}", format_score(first), format_score(last), drop));
    nar.say(_("articles: BLEU 35.2 at length 10 -> 18.7 at length 50 (no source given); Bahdanau et al. 2014, Table 1: "
            "RNNenc-50 17.82 BLEU on all test sentences (RNNsearch-50: 26.75)."));
    nar.code("attn/models/seq2seq_eval.hpp: evaluate_model; attn/data/bleu.hpp: corpus_bleu");
    nar.why(_("token accuracy counts words in the right place: fluent output with the wrong words still earns n-gram credit."));

    nar.step(_("The bottleneck, directly"), _("accuracy of y_i by target position i"));
    const std::vector<LengthBucket> ranges = {{1, 5}, {6, 10}, {11, 20}, {21, 30}, {31, 40}, {41, 50}, {51, 60}};
    const Mat pa = position_accuracy(r.hyps, corpus.test, default_length_buckets(), ranges);
    Labels bucket_labels, range_labels;
    for (const auto& b : default_length_buckets()) bucket_labels.push_back(b.label());
    for (const auto& b : ranges) range_labels.push_back(_f("pos {}", b.label()));
    Table pt([&] { Labels h = {_("length")}; h.insert(h.end(), range_labels.begin(), range_labels.end()); return h; }());
    for (std::size_t b = 0; b < pa.shape(0); ++b) {
      Labels row = {bucket_labels[b]};
      for (std::size_t k = 0; k < pa.shape(1); ++k) row.push_back(std::isnan(pa(b, k)) ? "" : format_score(pa(b, k)));
      pt.add(row);
    }
    nar.table(pt, /*as_result=*/true);
    nar.record("position_accuracy", pa);
    const double early_short = pa(0, 0), early_long = pa(pa.shape(0) - 1, 0);
    nar.result(_f("first five words right: {}% in 5-10-word sentences, {}% in 51-60-word sentences",
                           format_score(early_short), format_score(early_long)));
    // The position range that loses most between the shortest and the longest sentences.
    std::size_t worst = 0;
    double worst_drop = -1.0;
    for (std::size_t k = 0; k < pa.shape(1); ++k) {
      const double a = pa(0, k), b = pa(pa.shape(0) - 1, k);
      if (!std::isnan(a) && !std::isnan(b) && a - b > worst_drop) worst = k, worst_drop = a - b;
    }
    const double worst_short = pa(0, worst), worst_long = pa(pa.shape(0) - 1, worst);
    nar.result(_f("largest drop: positions {}, {}% -> {}%", ranges[worst].label(), format_score(worst_short),
                           format_score(worst_long)));
    nar.code("attn/models/seq2seq_eval.hpp: position_accuracy");
    nar.why(_("the first words are read off c while the decoder's state is still c itself; every later word also depends "
            "on the decoder carrying its place through its own steps and guesses, and c holds too little detail "
            "of a long sentence to put it back on track."));

    nar.export_file("results.json", results_json(results));  // written with the tensors by --export
    nar.step(_("What the attention chapters change"), "c  →  c_i = Σ_j α_ij h_j");
    nar.say(_("chapter 01 keeps every h_j and lets each decoder step choose its own mixture of them."));
    nar.takeaway({
        _f("One fixed vector (c = h_S, {} numbers) carries short sentences: BLEU {} at 5-10 words.",
                    c.size(), format_score(first)),
        _f("It collapses as sentences grow: BLEU {} at 51-60 words ({}), exact match {}% -> {}%.",
                    format_score(last), drop, format_score(r.buckets.front().exact),
                    format_score(r.buckets.back().exact)),
        _f("Every target position loses as sentences grow; the first five words hold best ({}% right at 51-60 "
                    "words), the largest drop is at positions {} ({}% -> {}%).", format_score(early_long),
                    ranges[worst].label(), format_score(worst_short), format_score(worst_long)),
    });
  });
}
