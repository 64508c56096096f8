#!/usr/bin/perl
# The one TAP counter of the test runners (test/runners).  Counts TAP
# streams with TAP::Parser, in assertions: passed is the number of ok
# lines, failed the number of not ok lines, plus one for a stream that has
# problems otherwise (no plan or the wrong one, a parse error, a test file
# that died).  Two ways in:
#
#   perl test/tap-count.pl [--count NAME] [-I DIR]... [-d DBNAME] FILE...
#       a prove / pg_prove stand-in: runs TAP test files (or, with -d,
#       pgTAP .sql files against that database) with TAP::Harness and counts
#       each file's stream.  test/runners passes it to make as PROVE or
#       PG_PROVE, so the make targets run the tests with their own settings.
#   perl test/tap-count.pl --count NAME --log LOG
#       counts the TAP lines of a runner's output (lines that are not TAP,
#       such as its messages, are ignored).
#
# With --count NAME and MEMTX_TEST_OUT set, it writes "passed failed" to
# $MEMTX_TEST_OUT/NAME.count; it prints "N passed, N failed" last.  Exit
# status 1 when anything failed.
use strict;
use warnings;
use Getopt::Long qw(:config no_ignore_case bundling);
use TAP::Harness;
use TAP::Parser;

my ($name, $db, $log, @lib);
GetOptions('count=s' => \$name, 'I=s' => \@lib, 'd|dbname=s' => \$db, 'log=s' => \$log)
  or die "usage: tap-count.pl [--count NAME] ([-I DIR]... [-d DBNAME] FILE... | --log LOG)\n";

# count(parser...): (passed, failed) over finished parsers
sub count {
	my ($passed, $failed) = (0, 0);
	for my $p (@_) {
		$passed += scalar($p->passed);
		$failed += scalar($p->failed);
		$failed += 1 if $p->has_problems && !scalar($p->failed);
	}
	return ($passed, $failed);
}

my ($passed, $failed);
if (defined $log) {
	open my $in, '<', $log or die "tap-count.pl: $log: $!\n";
	my $tap = do { local $/; <$in> };
	close $in;
	my $parser = TAP::Parser->new({ tap => $tap });
	$parser->run;
	($passed, $failed) = count($parser);
} else {
	my %args = (verbosity => 0, lib => \@lib);
	$args{sources} = { pgTAP => { dbname => $db, suffix => '.sql' } } if defined $db;
	my $agg = TAP::Harness->new(\%args)->runtests(@ARGV);
	($passed, $failed) = count(map { $agg->parsers($_) } $agg->descriptions);
}
if (defined $name && $ENV{MEMTX_TEST_OUT}) {
	open my $fh, '>', "$ENV{MEMTX_TEST_OUT}/$name.count" or die $!;
	print $fh "$passed $failed\n";
	close $fh;
}
print "$passed passed, $failed failed\n";
exit($failed ? 1 : 0);
